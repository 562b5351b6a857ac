// The simulator as a server on 127.0.0.1, which the shims and the control plane send their commands
// to: a command then costs a shell and a socket instead of starting Node.js, about 35 ms of CPU that
// thousands of commands a test run pay otherwise (docs/weka-simulator.md). Each command runs through
// runSimulator as the one-shot CLI runs it, under the same node and cluster file locks, so commands
// of many nodes, and of the CLI beside it, run side by side.
//
// The exchange, one command per connection: the client sends the argument count and then each
// argument, every field ended by a NUL byte; the server answers "EXIT STDERR_BYTES\n", the command's
// stderr, then its stdout, and closes. A shell reads that with `read`, `head -c` and `cat`.
import { mkdir, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { runSimulator } from './cli.js';
import { EXIT_INTERNAL, EXIT_USAGE, type SimResult } from './outcome.js';

/** The file, in the shims' directory, that holds the server's port for the shims and `simulate`. */
export const SERVER_PORT_FILE = 'weka-sim.port';

export interface SimulatorServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the server on a free port of 127.0.0.1 and writes that port into `dir`'s SERVER_PORT_FILE. */
export async function startSimulatorServer(dir: string): Promise<SimulatorServer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serveOne(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('weka-sim server: no TCP address');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, SERVER_PORT_FILE), `${address.port}\n`);
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function serveOne(socket: Socket): void {
  let buffered = Buffer.alloc(0);
  let answered = false;
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    if (answered) return;
    buffered = Buffer.concat([buffered, chunk]);
    const request = decodeRequest(buffered);
    if (request === undefined) return;
    answered = true;
    const run: Promise<SimResult> =
      'error' in request
        ? Promise.resolve({ exitCode: EXIT_USAGE, stdout: '', stderr: `weka-sim server: ${request.error}\n` })
        : runSimulator(request.argv).catch((err: unknown) => ({
            exitCode: EXIT_INTERNAL,
            stdout: '',
            stderr: `weka-sim: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
          }));
    void run.then((result) => {
      if (!socket.destroyed) socket.end(encodeAnswer(result));
    });
  });
}

/** The request in `data` once it is whole; undefined while more is to come. */
export function decodeRequest(data: Buffer): { argv: string[] } | { error: string } | undefined {
  const fields: string[] = [];
  let start = 0;
  for (let i = data.indexOf(0, start); i >= 0; i = data.indexOf(0, start)) {
    fields.push(data.subarray(start, i).toString('utf8'));
    start = i + 1;
    const count = Number(fields[0]);
    if (!Number.isInteger(count) || count < 0) return { error: `bad argument count ${JSON.stringify(fields[0])}` };
    if (fields.length === count + 1) return { argv: fields.slice(1) };
  }
  return undefined;
}

export function encodeRequest(argv: readonly string[]): Buffer {
  return Buffer.from([String(argv.length), ...argv].map((f) => `${f}\0`).join(''), 'utf8');
}

export function encodeAnswer(result: SimResult): Buffer {
  const stderr = Buffer.from(result.stderr, 'utf8');
  return Buffer.concat([
    Buffer.from(`${result.exitCode} ${stderr.length}\n`),
    stderr,
    Buffer.from(result.stdout, 'utf8'),
  ]);
}

export function decodeAnswer(data: Buffer): SimResult {
  const newline = data.indexOf(10);
  const header = newline < 0 ? '' : data.subarray(0, newline).toString('utf8');
  const match = /^(\d+) (\d+)$/.exec(header);
  if (!match) throw new Error(`weka-sim server: malformed answer ${JSON.stringify(data.subarray(0, 80).toString())}`);
  const errEnd = newline + 1 + Number(match[2]);
  return {
    exitCode: Number(match[1]),
    stderr: data.subarray(newline + 1, errEnd).toString('utf8'),
    stdout: data.subarray(errEnd).toString('utf8'),
  };
}

/** Runs one simulator command (its whole argv, `--state DIR ...`) through the server whose port `dir` holds. */
export function requestSimulator(dir: string, argv: readonly string[]): Promise<SimResult> {
  const port = Number(readFileSync(join(dir, SERVER_PORT_FILE), 'utf8').trim());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write(encodeRequest(argv)));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err) => reject(new Error(`weka-sim server on 127.0.0.1:${port}: ${err.message}`)));
    socket.on('end', () => {
      try {
        resolve(decodeAnswer(Buffer.concat(chunks)));
      } catch (err) {
        reject(err as Error);
      }
    });
  });
}

/**
 * The stdout of one simulator command run through the server (requestSimulator); fails unless it
 * exits 0, with the command, its exit code and stderr in the message and `code`, `stdout` and
 * `stderr` on the error.
 */
export async function simulatorOutput(dir: string, argv: readonly string[]): Promise<string> {
  const result = await requestSimulator(dir, argv);
  if (result.exitCode !== 0)
    throw Object.assign(new Error(`weka-sim ${argv.join(' ')} exited ${result.exitCode}: ${result.stderr}`), {
      code: result.exitCode,
      stdout: result.stdout,
      stderr: result.stderr,
    });
  return result.stdout;
}

// The operator's version, from the package.json it ships with.
import { operatorPackage } from './package-json.js';

export function operatorVersion(): string {
  const version = operatorPackage()?.version;
  return typeof version === 'string' ? version : 'unknown';
}

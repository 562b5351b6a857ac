// The image allow-list: the images the operator creates pods from. Every pod it creates is
// privileged and runs on a node a tenant chose, so a tenant who may create a WekaContainer must
// not choose just any image. The same list, from the chart's `allowedImages` value, is enforced
// twice: here, before a pod is created, and by the chart's admission policy on WekaContainer and
// WekaCluster create and update (deploy/helm/weka-drives-operator/templates/admission-policies.yaml,
// whose CEL rule uses the very regular expressions below).
//
// An entry is either a repository, such as quay.io/weka.io/weka-in-container: that repository
// with any tag and/or digest passes, and nothing else (not quay.io/weka.io/weka-in-container-evil,
// nor a repository below it); or it ends in "/", such as registry.example.com/weka/: every
// repository below that registry or path passes, with any tag and/or digest. Images are compared
// as written in the spec: docker.io/library/x and x are different strings.

/** The Weka image repository. */
export const DEFAULT_ALLOWED_IMAGES: readonly string[] = ['quay.io/weka.io/weka-in-container'];

/** A path component of a repository name (the distribution reference grammar). */
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const TAG = ':[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}';
const DIGEST = '@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';

/** What may follow a repository entry: an optional tag, then an optional digest. */
export const AFTER_REPOSITORY = `^(?:${TAG})?(?:${DIGEST})?$`;
/** What may follow a prefix entry (ending in "/"): one or more path components, then a tag and/or digest. */
export const AFTER_PREFIX = `^${COMPONENT}(?:/${COMPONENT})*(?:${TAG})?(?:${DIGEST})?$`;

const afterRepository = new RegExp(AFTER_REPOSITORY);
const afterPrefix = new RegExp(AFTER_PREFIX);
/** A repository or a prefix: a registry host (with an optional port) or path component, then components, optionally "/". */
const ENTRY = new RegExp(`^${COMPONENT}(?::[0-9]+)?(?:/${COMPONENT})*/?$`);

/** Whether `image` is one of the allowed repositories, or under one of the allowed prefixes. */
export function imageAllowed(image: string, allowed: readonly string[]): boolean {
  return allowed.some((entry) => {
    if (entry === '' || !image.startsWith(entry)) return false;
    const rest = image.slice(entry.length);
    return (entry.endsWith('/') ? afterPrefix : afterRepository).test(rest);
  });
}

/** The allow-list from its comma-separated setting (WEKA_ALLOWED_IMAGES), each entry checked. */
export function parseAllowedImages(text: string): { ok: true; allowed: string[] } | { ok: false; error: string } {
  const allowed = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (allowed.length === 0)
    return { ok: false, error: 'must list at least one image repository, such as quay.io/weka.io/weka-in-container' };
  for (const entry of allowed) {
    const last = entry.slice(entry.lastIndexOf('/') + 1);
    if (entry.includes('@') || last.includes(':'))
      return {
        ok: false,
        error: `"${entry}" is not a repository: write it without a tag or digest (every tag and digest of it is allowed)`,
      };
    if (!ENTRY.test(entry))
      return {
        ok: false,
        error: `"${entry}" is not a repository (such as quay.io/weka.io/weka-in-container) nor a prefix ending in "/" (such as registry.example.com/weka/)`,
      };
  }
  return { ok: true, allowed };
}

/** How each entry reads in a message. */
export function describeAllowedImages(allowed: readonly string[]): string {
  if (allowed.length === 0) return 'none';
  return allowed
    .map((e) => (e.endsWith('/') ? `${e} (any repository under it)` : `${e} (any tag or digest)`))
    .join(', ');
}

/** Why the operator refuses to create a pod from `image`, and how to change what is allowed. */
export function imageNotAllowedMessage(image: string, allowed: readonly string[]): string {
  return (
    `image "${image}" is not allowed: the operator creates pods only from ${describeAllowedImages(allowed)}. ` +
    `Set spec.image to one of them, or have the operator's administrator add the repository to the ` +
    `Helm chart's allowedImages value (the operator's WEKA_ALLOWED_IMAGES setting and the chart's admission policy)`
  );
}

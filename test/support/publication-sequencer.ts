import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { PublishEnv } from "../../workers/control/src/publication/publish.ts";

type WithEnv = { env: PublishEnv };

/**
 * Runs `body` while the passport's publication sequencer publishes with `overrides` in its
 * environment (a failing or stalled KV, another signing key): the sequencer writes with its own
 * bindings, not with those of whoever asked it to publish.
 */
export async function withSequencerEnv<T>(
  identityId: string,
  overrides: Partial<PublishEnv>,
  body: () => Promise<T>,
): Promise<T> {
  const stub = env.PUBLICATION_SEQUENCER.getByName(identityId);
  let original: PublishEnv | undefined;
  await runInDurableObject(stub, (instance) => {
    const sequencer = instance as unknown as WithEnv;
    original = sequencer.env;
    sequencer.env = { ...original, ...overrides };
  });
  try {
    return await body();
  } finally {
    await runInDurableObject(stub, (instance) => {
      if (original) (instance as unknown as WithEnv).env = original;
    });
  }
}

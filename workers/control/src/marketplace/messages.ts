import { z } from "zod";

/**
 * The queue message of one acquisition. The registration token travels only here, sealed with
 * AES-GCM under MARKETPLACE_TOKEN_ENCRYPTION_KEY and bound to the acquisition id; it is gone once
 * the message is acknowledged.
 */
export const AcquisitionMessage = z
  .object({
    kind: z.literal("acquisition"),
    version: z.literal(1),
    acquisition_id: z.string().min(1).max(64),
    sealed_token: z.object({ iv: z.string().min(1).max(32), ciphertext: z.string().min(1).max(16_384) }).strict(),
    posted_at: z.string(),
  })
  .strict();
export type AcquisitionMessage = z.infer<typeof AcquisitionMessage>;

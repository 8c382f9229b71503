import { BindingClass, Family } from "@passport/domain";
import { z } from "zod";

export const BindingInput = z
  .object({
    class: BindingClass,
    value: z.string().min(1).max(2048),
    label: z.string().min(1).max(200).optional(),
  })
  .strict();
export type BindingInput = z.infer<typeof BindingInput>;

export const CreatePassportRequest = z
  .object({
    organisation_id: z.string().min(1).max(64).optional(),
    family: Family,
    display_name: z.string().min(1).max(200).optional(),
    environment: z.string().min(1).max(64).optional(),
    version: z.string().min(1).max(64).optional(),
    bindings: z.array(BindingInput).max(50).default([]),
  })
  .strict();
export type CreatePassportRequest = z.infer<typeof CreatePassportRequest>;

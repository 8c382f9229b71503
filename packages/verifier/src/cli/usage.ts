/** `passport --help`: every command and flag, and the exit codes (documented in the package README). */
export const USAGE = `Usage:
  passport resolve <identity-id> --jwks FILE|URL [proof options] [--resolver URL] [--json]
  passport verify <identity-id> --jwks FILE|URL [expectations] [proof options] [--resolver URL] [--json]
  passport verify <identity-id> --jwks FILE|URL --policy FILE --action NAME [--amount VALUE:CUR]
                  [--resource R] [--base-url URL] [proof options] [--resolver URL] [--json]
  passport envelope <agent-manifest-url | identity-id> [--resolver URL] [--json]
  passport log --log KEY|FILE [--from N] [--to N] [witness options] [--resolver URL] [--json]
  passport verify-card <agent-card-url> [identity-id] --jwks FILE|URL [--resolver URL] [--json]
  passport help

Expectations (verify):
  --family api|agent             the passport family the decision expects
  --org ID                       the responsible organisation id
  --env NAME                     the environment (state.environment), e.g. production
  --version VERSION              the version (state.version)
  --base-url URL                 the address about to be called; must be under a verified endpoint binding
  --require-binding CLASS[=VAL]  a binding that must be present and verified (repeatable)
  --require-evidence CLAIM[:MAX] a claim that must have observed (or trusted) evidence covering the
                                 target, optionally no older than MAX (repeatable)
  --lifecycle LIST               accepted lifecycle statuses, comma-separated (default: active)
  --availability LIST            accepted availability signals; the record must state one
  --consequence lower|changing|higher   spec 4.1 freshness policy (default: lower)
  --max-age DURATION             maximum age of the record copy, e.g. 30s, 5m

Policy (verify; docs/policy.md): the policy's action gives the expectations, and the outcome
maps to a decision (allow, challenge, deny, delay, re-resolve); --json adds the receipt.
  --policy FILE                  the policy document (JSON); an invalid one is refused with the
                                 JSON pointer of its first problem
  --action NAME                  the policy action to decide, e.g. refund
  --amount VALUE:CURRENCY        the call's amount, checked against the authority's limit (50.00:EUR)
  --resource R                   the call's resource, checked against the authority's scope

Current proof (verify --consequence higher; docs/verifier.md):
  --status-token TOKEN|FILE      a status token the API stapled (its Passport-Status header); when
                                 absent or unusable, one is fetched from the resolver
  --status-max-age DURATION      oldest status token accepted, by its issue time (default 30s)
  --record-file FILE             decide on this record (the body as a mirror or cache served it)
                                 instead of fetching it; its proof is checked as usual
  --record-signature JWS|FILE    the Passport-Signature served with that record

Proof (resolve, verify):
  --jwks FILE|URL                the public keys you trust to sign records (a JWK Set file, or an
                                 https URL you choose); required
  --insecure-no-signature        check WITHOUT keys: signatures are not checked, and a passing
                                 verify is ok_signature_skipped (exit 5), never ok
  --history                      also check the published history chains to the record
  --seen VERSION:DIGEST          a version seen before; an older record served as current fails

Transparency log (resolve, verify: --log turns it on; log: --log is required):
  --log KEY|FILE                 the log's verifier key (<origin>+<hash>+<key>) you pinned, or a
                                 file holding it: the record must be in the log, in a checkpoint
                                 no older than --log-max-age, and the newest version as of it
  --log-max-age DURATION         oldest acceptable checkpoint (default 1h)
  --log-scan N                   most entry bundles read after the record's entry (default 256)
  --witness KEY|FILE             a witness verifier key you trust (repeatable)
  --witness-quorum N             cosignatures required from the witnesses (default: all of them)
  --log-state FILE               where the last accepted checkpoint is kept (default
                                 $PASSPORT_LOG_STATE, else $XDG_STATE_HOME or ~/.local/state,
                                 /passport/log-checkpoints.json)
  --from N, --to N               log: audit entries N (default 0) up to, not including, --to
                                 (default: the checkpoint's size)

Signed A2A agent card (verify-card; docs/verifier.md, "Signed A2A agent cards"): fetches the
card, resolves the passport named after the URL (else the card's "passport" member) with its
proof checked, and checks the card's JWS signatures against the keys the passport proves. It
prints one of card_signed (exit 0), card_unsigned, key_not_proven, key_withdrawn,
passport_keys_unproven, card_malformed, passport_unnamed (exit 1), signature_invalid (exit 4),
card_unavailable, key_unavailable (exit 3).

Common:
  --resolver URL                 resolver base URL, https (plain http only to loopback)
                                 (default: $PASSPORT_RESOLVER or http://127.0.0.1:8787);
                                 one that does not answer is named on stderr
  --timeout DURATION             per attempt (default 5s)
  --retries N                    retries after a network failure or 5xx (default 2)
  --json                         print the machine-readable result

Durations: seconds, or a number with s, m, h or d (90s, 15m, 12h, 30d).
Exit codes: 0 ok (with --policy: the decision is allow), 1 verification failed (with --policy:
            any other decision whose outcome would exit 0) (or not found / malformed id), 2 usage error,
            3 network failure (could not fetch proof; not evidence against the identity),
            4 proof failed (signature_invalid, unknown_key, history_broken; the log
              failures checkpoint_invalid, witness_quorum_unmet, rolled_back, split_view,
              inconsistent, log_tampered, not_in_log, not_newest; log: any audit failure),
              while checkpoint_stale, newest_unverified and not_in_log
              beyond_checkpoint (published after the newest checkpoint) are 1,
            5 every expectation held (verify) or the record was found (resolve), but its
              signature was not checked (--insecure-no-signature).`;

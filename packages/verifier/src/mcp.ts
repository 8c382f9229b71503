// `@passport/verifier/mcp`: an MCP client hook (docs/reciprocal-trust.md, Call path). Before the
// client connects to a server, and before each tool call whose action the policy names, the
// server's passport is decided under the policy; anything but `allow` refuses the step with the
// decision, and nothing is sent. `@modelcontextprotocol/sdk` is an optional peer dependency: this
// module imports only its types and works on any object with its `connect` and `callTool`.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { DecisionResult } from "./decide.ts";
import type { PolicyDocument } from "./policy.ts";
import type { Verifier } from "./verifier.ts";

export interface McpPassportOptions {
  verifier: Verifier;
  /** The server's passport (an API passport with an `mcp_surface` binding); absent when none is known. */
  identityId?: string;
  policy: PolicyDocument;
  /** The policy action deciding the connection; default `"connect"`. Not in the policy: not checked. */
  connectAction?: string;
  /** The policy action of a tool call; default `tool:{name}`. Not in the policy: not checked. */
  toolAction?: (tool: string) => string | undefined;
  /** Told of every decision made (allowed or not). */
  onDecision?: (step: string, result: DecisionResult | undefined) => void;
}

/** The step was refused: the server's passport did not pass (or there is none) where the policy requires one. */
export class McpPassportError extends Error {
  readonly step: string;
  readonly result: DecisionResult | undefined;

  constructor(step: string, message: string, result?: DecisionResult) {
    super(message);
    this.name = "McpPassportError";
    this.step = step;
    this.result = result;
  }
}

type Hookable = Pick<Client, "connect" | "callTool">;

/**
 * Guards an MCP client: returns the same client, whose `connect` and `callTool` first decide on
 * the server's passport where the policy names the step.
 * @example
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * const client = withPassport(new Client({ name: "agent", version: "1.0.0" }), { verifier, identityId: "psp_…", policy });
 * await client.connect(transport); // throws McpPassportError when the server's passport does not pass
 */
export function withPassport<C extends Hookable>(client: C, options: McpPassportOptions): C {
  const connectAction = options.connectAction ?? "connect";
  const toolAction = options.toolAction ?? ((tool: string) => `tool:${tool}`);

  async function check(step: string, action: string | undefined): Promise<void> {
    if (action === undefined || !options.policy.actions[action]) return;
    if (!options.identityId) {
      options.onDecision?.(step, undefined);
      throw new McpPassportError(
        step,
        `Refused ${step}: the policy's action "${action}" requires the server's passport, and none is known for this server.`,
      );
    }
    const result = await options.verifier.decide(options.identityId, { policy: options.policy, action });
    options.onDecision?.(step, result);
    if (result.decision !== "allow") {
      throw new McpPassportError(
        step,
        `Refused ${step}: the server's passport ${options.identityId} did not pass "${action}" (${result.outcome.outcome}, ${result.decision}).`,
        result,
      );
    }
  }

  const connect: Hookable["connect"] = client.connect.bind(client);
  const callTool: Hookable["callTool"] = client.callTool.bind(client);
  client.connect = async (...args: Parameters<Hookable["connect"]>) => {
    await check("connect", connectAction);
    return connect(...args);
  };
  client.callTool = async (...args: Parameters<Hookable["callTool"]>) => {
    await check(`tool ${args[0].name}`, toolAction(args[0].name));
    return callTool(...args);
  };
  return client;
}

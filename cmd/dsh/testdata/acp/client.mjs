// An editor-style ACP client on the official TypeScript SDK (@agentclientprotocol/sdk),
// driving `dsh acp` through initialize → new (with a real MCP server) → prompts with tool
// calls (permissions allowed and rejected, an MCP call denied by a PreToolUse hook) →
// cancel while a tool runs → a prompt after the cancel → a second process that loads the
// session and continues it (as a client advertising Zed's _meta.terminal_output). Every frame in both directions is validated against the ACP
// JSON Schema shipped in the SDK package. It prints one JSON report on stdout and exits 1
// with the reasons when a check fails.
//
// Environment: DSH_BIN, WORK (the session cwd), SESSIONS, SCRIPT1, SCRIPT2, HOOKS,
// FS_SERVER (the MCP filesystem server's entry point), SCHEMA (schema/v1/schema.json).
import { spawn } from "node:child_process";
import { Readable, Writable, Transform } from "node:stream";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import Ajv2020 from "ajv/dist/2020.js";

const env = process.env;
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };
const report = { phases: {} };

// ---- schema validation of every frame -------------------------------------------------
const schema = JSON.parse(fs.readFileSync(env.SCHEMA, "utf8"));
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
ajv.addSchema(schema, "acp");
const byMethod = {}; // "side method kind" -> def name
for (const [name, def] of Object.entries(schema.$defs)) {
  if (!def["x-method"]) continue;
  const kind = name.endsWith("Response") ? "response" : name.endsWith("Notification") ? "notification" : "request";
  byMethod[`${def["x-side"]} ${def["x-method"]} ${kind}`] = name;
}
const validators = {};
const validator = (ref) => (validators[ref] ??= ajv.compile({ $ref: `acp#${ref}` }));
const rootIndex = Object.fromEntries(schema.anyOf.map((s, i) => [s.title, i]));

// validateFrames checks one direction's lines. from is "agent" or "client"; requests of
// the other direction give the methods of this direction's responses.
function validateFrames(lines, from, peerRequests, ownRequests, label) {
  let n = 0;
  const to = from === "agent" ? "client" : "agent";
  for (const line of lines) {
    n++;
    let f;
    try { f = JSON.parse(line); } catch (e) { failures.push(`${label}: not JSON: ${line.slice(0, 120)}`); continue; }
    const root = validator(`/anyOf/${rootIndex[from === "agent" ? "Agent" : "Client"]}`);
    if (!root(f)) failures.push(`${label}: frame fails the ${from} message schema: ${ajv.errorsText(root.errors)}: ${line.slice(0, 200)}`);
    let def;
    if (f.method !== undefined && f.id !== undefined) {
      ownRequests.set(JSON.stringify(f.id), f.method);
      def = byMethod[`${to} ${f.method} request`];
      if (!def) { failures.push(`${label}: unknown request ${f.method}`); continue; }
      const v = validator(`/$defs/${def}`);
      if (!v(f.params)) failures.push(`${label}: ${f.method} params: ${ajv.errorsText(v.errors)}`);
    } else if (f.method !== undefined) {
      def = byMethod[`${to} ${f.method} notification`];
      if (!def) { failures.push(`${label}: unknown notification ${f.method}`); continue; }
      const v = validator(`/$defs/${def}`);
      if (!v(f.params)) failures.push(`${label}: ${f.method} params: ${ajv.errorsText(v.errors)}: ${line.slice(0, 300)}`);
    } else if (f.error === undefined) {
      const method = peerRequests.get(JSON.stringify(f.id));
      if (!method) { failures.push(`${label}: response to unknown id ${f.id}`); continue; }
      def = byMethod[`${from} ${method} response`];
      const v = validator(`/$defs/${def}`);
      if (!v(f.result)) failures.push(`${label}: ${method} result: ${ajv.errorsText(v.errors)}: ${line.slice(0, 300)}`);
    }
  }
  return n;
}

// ---- one dsh acp process, with both directions recorded ------------------------------
function startAgent(script) {
  const child = spawn(env.DSH_BIN, ["acp", "--model", `scripted:${script}`, "--sessions", env.SESSIONS, "--hooks", env.HOOKS,
    "--mcp-trust", "fs"], // the fs server's readOnlyHint counts: its reads do not ask
    { stdio: ["pipe", "pipe", "pipe"], cwd: env.WORK });
  const rec = { toAgent: "", fromAgent: "", stderr: "" };
  const tap = (key) => new Transform({ transform(chunk, _enc, cb) { rec[key] += chunk.toString("utf8"); cb(null, chunk); } });
  const inTap = tap("toAgent"); inTap.pipe(child.stdin);
  const outTap = tap("fromAgent"); child.stdout.pipe(outTap);
  child.stderr.on("data", (d) => { rec.stderr += d; });
  const exited = new Promise((res) => child.on("exit", (code, signal) => res({ code, signal })));
  const stream = acp.ndJsonStream(Writable.toWeb(inTap), Readable.toWeb(outTap));
  return { child, rec, stream, exited, close: () => inTap.end() };
}

function validateProcess(rec, label) {
  const lines = (s) => s.split("\n").filter((l) => l.length > 0);
  const clientReqs = new Map(), agentReqs = new Map();
  // Client frames first (they hold the requests the agent's responses answer); the agent's
  // requests are collected on its pass and the client's responses checked after.
  const toAgent = lines(rec.toAgent), fromAgent = lines(rec.fromAgent);
  const nc1 = validateFrames(toAgent.filter((l) => JSON.parse(l).method !== undefined), "client", agentReqs, clientReqs, `${label} client→agent`);
  const na = validateFrames(fromAgent, "agent", clientReqs, agentReqs, `${label} agent→client`);
  const nc2 = validateFrames(toAgent.filter((l) => JSON.parse(l).method === undefined), "client", agentReqs, clientReqs, `${label} client→agent`);
  return { framesToAgent: nc1 + nc2, framesFromAgent: na };
}

// ---- the client application ------------------------------------------------------------
function makeClient(state) {
  return acp.client({ name: "dsh-test-client" })
    .onNotification(acp.methods.client.session.update, async ({ params }) => {
      state.updates.push(params.update);
      state.onUpdate?.(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      const id = params.toolCall.toolCallId;
      state.permissions.push(id);
      check(state.updates.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === id),
        `permission for ${id} before its tool_call`);
      const allow = state.allow.has(id);
      return { outcome: { outcome: "selected", optionId: allow ? "allow-once" : "reject-once" } };
    });
}

const newState = (allow) => ({ updates: [], permissions: [], allow: new Set(allow) });
const text = (updates, kind) => updates.filter((u) => u.sessionUpdate === kind).map((u) => u.content.text).join("");
const toolUpdates = (updates, id) => updates.filter((u) => u.toolCallId === id);

// Every update that refers to a call comes after that call's tool_call.
function checkCallOrder(updates, label) {
  const announced = new Set();
  for (const u of updates) {
    if (u.sessionUpdate === "tool_call") announced.add(u.toolCallId);
    if (u.sessionUpdate === "tool_call_update") check(announced.has(u.toolCallId), `${label}: update for unannounced ${u.toolCallId}`);
  }
}

let sessionId;

// ---- process 1 ---------------------------------------------------------------------------
{
  const agent = startAgent(env.SCRIPT1);
  const state = newState(["w1", "e1", "m3", "s1"]);
  await makeClient(state).connectWith(agent.stream, async (cx) => {
    const init = await cx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    check(init.protocolVersion === 1, "protocolVersion 1");
    check(init.agentCapabilities?.loadSession === true, "loadSession advertised");
    check((init.authMethods ?? []).length >= 1, "an auth method");

    const created = await cx.request(acp.methods.agent.session.new, {
      cwd: env.WORK,
      mcpServers: [{ name: "fs", command: process.execPath, args: [env.FS_SERVER, env.WORK], env: [] }],
    });
    sessionId = created.sessionId;
    check(/^[A-Za-z0-9_-]+$/.test(sessionId), "a session id");
    // The commands catalogue comes after the response.
    await new Promise((r) => setTimeout(r, 50));
    check(state.updates.some((u) => u.sessionUpdate === "available_commands_update"), "available_commands_update after session/new");

    // Prompt 1: Write (allowed), Bash (rejected), an MCP read (read-only: no permission),
    // a Bash echo (allowed; fenced output), then an MCP read (read-only: no permission), an
    // MCP write (denied by the PreToolUse hook on mcp__.*) and an MCP mkdir (allowed).
    state.updates.length = 0;
    const r1 = await cx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Set things up" }] });
    check(r1.stopReason === "end_turn", `prompt 1 stopReason ${r1.stopReason}`);
    const u1 = state.updates;
    checkCallOrder(u1, "prompt 1");
    check(text(u1, "agent_thought_chunk").includes("plan"), "thought chunks");
    check(text(u1, "agent_message_chunk").includes("Writing files."), "message chunks");
    check(fs.readFileSync(path.join(env.WORK, "hello.txt"), "utf8") === "hello\n", "Write ran after allow");
    const w1 = toolUpdates(u1, "w1");
    check(w1[0]?.kind === "edit" && w1[0]?.content?.[0]?.type === "diff", "Write card is an edit with a diff");
    check(w1.some((u) => u.status === "in_progress"), "Write in_progress at dispatch");
    const w1done = w1.find((u) => u.status === "completed");
    check(w1done?.content?.[0]?.type === "diff" && w1done.content[0].newText === "hello\n", "completed Write keeps its diff");
    check(!fs.existsSync(path.join(env.WORK, "bash.txt")), "rejected Bash did not run");
    const b1 = toolUpdates(u1, "b1");
    check(b1[0]?.kind === "execute" && b1.at(-1)?.status === "failed", "rejected Bash failed");
    check(!b1.some((u) => u.status === "in_progress"), "rejected Bash never dispatched");
    const m1 = toolUpdates(u1, "m1").at(-1);
    check(m1?.status === "completed" && JSON.stringify(m1.content).includes("hello"), "MCP read_text_file result");
    const m2 = toolUpdates(u1, "m2").at(-1);
    check(m2?.status === "failed" && JSON.stringify(m2.content).includes("no MCP writes"), "hook denied MCP write_file");
    check(!fs.existsSync(path.join(env.WORK, "mcp.txt")), "denied MCP write did not run");
    check(fs.existsSync(path.join(env.WORK, "made")), "allowed MCP create_directory ran");
    const e1 = toolUpdates(u1, "e1").at(-1);
    check(e1?.status === "completed" && e1.content?.[0]?.content?.text?.startsWith("```console\n"), "Bash output fenced");
    check(JSON.stringify(state.permissions) === JSON.stringify(["w1", "b1", "e1", "m3"]), `permission requests ${JSON.stringify(state.permissions)}`);

    // Prompt 2: a long Bash call, cancelled once it runs.
    state.updates.length = 0;
    let cancelledAt;
    state.onUpdate = (u) => {
      if (u.toolCallId === "s1" && u.status === "in_progress" && !cancelledAt) {
        cancelledAt = performance.now();
        cx.notify(acp.methods.agent.session.cancel, { sessionId });
      }
    };
    const r2 = await cx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Wait a while" }] });
    const cancelMs = performance.now() - cancelledAt;
    state.onUpdate = undefined;
    check(r2.stopReason === "cancelled", `prompt 2 stopReason ${r2.stopReason}`);
    check(cancelledAt !== undefined, "cancel sent while the tool ran");
    check(toolUpdates(state.updates, "s1").at(-1)?.status === "failed", "the cancelled call settled before the response");
    report.cancelToResponseMs = Math.round(cancelMs * 10) / 10;

    // Prompt 3: the session goes on after the cancel.
    state.updates.length = 0;
    const r3 = await cx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Still there?" }] });
    check(r3.stopReason === "end_turn" && text(state.updates, "agent_message_chunk").includes("Still here."), "prompt after cancel");

    // Bad input: an unknown session.
    try {
      await cx.request(acp.methods.agent.session.prompt, { sessionId: "nope", prompt: [{ type: "text", text: "x" }] });
      failures.push("prompt for an unknown session succeeded");
    } catch (e) { check(e.code === -32002, `unknown session code ${e.code}`); }
  });
  agent.close();
  const exit = await agent.exited;
  check(exit.code === 0, `process 1 exit ${JSON.stringify(exit)}: ${agent.rec.stderr}`);
  report.phases.first = validateProcess(agent.rec, "process 1");
}

// ---- process 2: load the session and continue it -----------------------------------------
{
  const agent = startAgent(env.SCRIPT2);
  const state = newState([]);
  await makeClient(state).connectWith(agent.stream, async (cx) => {
    // This client is Zed-like: Bash calls come back as terminal cards (_meta convention).
    await cx.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: { _meta: { terminal_output: true } } });
    const loaded = await cx.request(acp.methods.agent.session.load, { sessionId, cwd: env.WORK, mcpServers: [] });
    check(loaded === null || typeof loaded === "object", "load result");
    const replay = [...state.updates];
    report.replayedUpdates = replay.length;
    checkCallOrder(replay, "replay");
    check(text(replay, "user_message_chunk").includes("Set things up"), "replay has the first prompt");
    check(text(replay, "agent_message_chunk").includes("Writing files."), "replay has the answer");
    check(toolUpdates(replay, "w1").some((u) => u.status === "completed"), "replay has the Write result");
    check(toolUpdates(replay, "s1").at(-1)?.status === "failed", "replay has the cancelled call");
    const e1 = toolUpdates(replay, "e1");
    check(e1[0]?.content?.[0]?.type === "terminal" && e1[0]?._meta?.terminal_info?.terminal_id === "e1", "replayed Bash is a terminal card");
    const e1done = e1.find((u) => u.status === "completed");
    check(e1done && e1done.content === undefined && e1done._meta?.terminal_output?.data?.includes("fenced") &&
      e1done._meta?.terminal_exit?.exit_code === 0, "terminal output and exit in _meta");

    state.updates.length = 0;
    const r = await cx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Continue" }] });
    check(r.stopReason === "end_turn", `resumed prompt stopReason ${r.stopReason}`);
    check(text(state.updates, "agent_message_chunk").includes("Resumed and continued."), "resumed answer");
  });
  agent.close();
  const exit = await agent.exited;
  check(exit.code === 0, `process 2 exit ${JSON.stringify(exit)}: ${agent.rec.stderr}`);
  report.phases.second = validateProcess(agent.rec, "process 2");
}

report.failures = failures;
console.log(JSON.stringify(report));
process.exit(failures.length ? 1 : 0);

// An ACP client on the official TypeScript SDK (@agentclientprotocol/sdk) that rejects
// every permission request, driving `dsh acp` through a prompt whose scripted model tries
// Writes whose targets it must not show: a file outside the workspace, a link in the
// workspace to it, /proc/self/environ, /proc/self/pagemap and a FIFO in the workspace.
// Then it damages the session's log and loads it, and loads a session whose log is a
// symbolic link to the outside file. It prints one JSON report on stdout and exits 1
// with the reasons when a check fails.
//
// Environment: DSH_BIN, WORK (the session cwd), SESSIONS, SCRIPT, OUTSIDE (the outside
// file), SECRET (a marker in the outside file), ENV_SECRET (a marker in dsh's
// environment).
import { spawn } from "node:child_process";
import { Readable, Writable, Transform } from "node:stream";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";

const env = process.env;
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };
const report = {};

function startAgent() {
  const child = spawn(env.DSH_BIN, ["acp", "--model", `scripted:${env.SCRIPT}`, "--sessions", env.SESSIONS],
    { stdio: ["pipe", "pipe", "pipe"], cwd: env.WORK, env: { ...process.env, DSH_TEST_ENV_SECRET: env.ENV_SECRET } });
  const rec = { fromAgent: "", stderr: "" };
  const inTap = new Transform({ transform(c, _e, cb) { cb(null, c); } });
  inTap.pipe(child.stdin);
  const outTap = new Transform({ transform(c, _e, cb) { rec.fromAgent += c.toString("utf8"); cb(null, c); } });
  child.stdout.pipe(outTap);
  child.stderr.on("data", (d) => { rec.stderr += d; });
  const exited = new Promise((res) => child.on("exit", (code, signal) => res({ code, signal })));
  const stream = acp.ndJsonStream(Writable.toWeb(inTap), Readable.toWeb(outTap));
  return { rec, stream, exited, close: () => inTap.end() };
}

const state = { updates: [], permissions: [] };
const client = acp.client({ name: "dsh-preview-test" })
  .onNotification(acp.methods.client.session.update, async ({ params }) => { state.updates.push(params.update); })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    state.permissions.push(params.toolCall.toolCallId);
    return { outcome: { outcome: "selected", optionId: "reject-once" } };
  });

const outsideBefore = fs.readFileSync(env.OUTSIDE);
const agent = startAgent();
await client.connectWith(agent.stream, async (cx) => {
  await cx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const { sessionId } = await cx.request(acp.methods.agent.session.new, { cwd: env.WORK, mcpServers: [] });
  const r = await cx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "try" }] });
  check(r.stopReason === "end_turn", `stopReason ${r.stopReason}`);
  for (const id of ["outside", "link", "environ", "pagemap", "fifo", "inside"]) {
    check(state.updates.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === id), `no tool_call for ${id}`);
    check(state.permissions.includes(id), `no permission asked for ${id}`);
  }
  // The Write of a workspace file still shows its old text.
  const inside = state.updates.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "inside");
  check(inside?.content?.[0]?.type === "diff" && inside.content[0].oldText === "old inside\n", `inside diff: ${JSON.stringify(inside?.content)}`);
  report.sessionId = sessionId;

  // Loading a session whose log is damaged in the middle answers an error and changes
  // nothing; so does one whose log is a symbolic link.
  const log = path.join(env.SESSIONS, `${sessionId}.jsonl`);
  const lines = fs.readFileSync(log, "utf8").split("\n");
  const damaged = [...lines.slice(0, 3), "garbage", ...lines.slice(3)].join("\n");
  const damagedID = "sess_damaged";
  fs.writeFileSync(path.join(env.SESSIONS, `${damagedID}.jsonl`), damaged);
  try {
    await cx.request(acp.methods.agent.session.load, { sessionId: damagedID, cwd: env.WORK, mcpServers: [] });
    failures.push("session/load of a damaged log succeeded");
  } catch (e) {
    check(/line 4/.test(e.message ?? "") || /line 4/.test(JSON.stringify(e.data ?? "")), `damaged load error does not name line 4: ${e.message}`);
    report.damagedLoadError = e.message;
  }
  check(fs.readFileSync(path.join(env.SESSIONS, `${damagedID}.jsonl`), "utf8") === damaged, "session/load changed the damaged log");
  check(!fs.readdirSync(env.SESSIONS).some((f) => f.includes("corrupt")), "session/load made a .corrupt file");
  fs.symlinkSync(env.OUTSIDE, path.join(env.SESSIONS, "sess_link.jsonl"));
  try {
    await cx.request(acp.methods.agent.session.load, { sessionId: "sess_link", cwd: env.WORK, mcpServers: [] });
    failures.push("session/load through a symbolic link succeeded");
  } catch (e) { report.linkLoadError = e.message; }
});
agent.close();
const exit = await agent.exited;
check(exit.code === 0, `exit ${JSON.stringify(exit)}: ${agent.rec.stderr}`);

const frames = agent.rec.fromAgent;
check(!frames.includes(env.SECRET), "the outside file's contents reached the client");
check(!frames.includes(env.ENV_SECRET), "dsh's environment (/proc/self/environ) reached the client");
check(fs.readFileSync(env.OUTSIDE).equals(outsideBefore), "the outside file changed");
report.framesBytes = frames.length;
report.failures = failures;
console.log(JSON.stringify(report));
process.exit(failures.length ? 1 : 0);

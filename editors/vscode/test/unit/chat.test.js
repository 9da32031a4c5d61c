// Unit tests of the chat view's state (no VS Code needed): node --test.
const test = require("node:test");
const assert = require("node:assert/strict");
const { ChatTranscript } = require("../../out/chatModel.js");

function transcript() {
  const posted = [];
  return { t: new ChatTranscript((m) => posted.push(m)), posted };
}

test("streamed text is rendered as it grows, and done ends the turn once", () => {
  const { t, posted } = transcript();
  const turn = t.begin("hi <there>");
  t.onEvent({ sessionId: "s1", type: "text", delta: "Hello " });
  t.onEvent({ sessionId: "s1", type: "text", delta: "**world**" });
  t.onEvent({ sessionId: "s1", type: "done", stopReason: "end_turn" });
  t.finish({ sessionId: "s1", stopReason: "end_turn", text: "Hello **world**" }, turn);
  assert.deepEqual(posted, [
    { type: "user", html: "hi &lt;there&gt;" },
    { type: "text", html: "<p>Hello </p>" },
    { type: "text", html: "<p>Hello <strong>world</strong></p>" },
    { type: "done", stopReason: "end_turn" },
  ]);
  assert.equal(t.sessionId, "s1");
  assert.equal(t.busy, false);
});

test("without chat events the answer's text is shown, and the turn still ends", () => {
  // A client whose codev/chatEvent handler is missing (e.g. not attached after a restart).
  const { t, posted } = transcript();
  const turn = t.begin("hi");
  t.finish({ sessionId: "s2", stopReason: "end_turn", text: "The answer." }, turn);
  assert.deepEqual(posted.slice(1), [
    { type: "text", html: "<p>The answer.</p>" },
    { type: "done", stopReason: "end_turn" },
  ]);
  assert.equal(t.sessionId, "s2");
});

test("a tool use and its result are shown between texts", () => {
  const { t, posted } = transcript();
  t.begin("read it");
  t.onEvent({ sessionId: "s", type: "toolUse", name: "Read", input: { file_path: "/a" } });
  t.onEvent({ sessionId: "s", type: "toolResult", status: "success", content: "42" });
  assert.deepEqual(posted.slice(1), [
    { type: "toolUse", html: '<b>Read</b> <code>{&quot;file_path&quot;:&quot;/a&quot;}</code>' },
    { type: "toolResult", status: "success", html: "42" },
  ]);
});

test("a restart ends the running turn (Stop is disabled) and a late failure of it is ignored", () => {
  const { t, posted } = transcript();
  const turn = t.begin("slow");
  t.onEvent({ sessionId: "s3", type: "text", delta: "Thinking" });
  t.reset("server restarted");
  assert.equal(t.busy, false);
  assert.equal(t.sessionId, undefined); // the new server does not know the old session
  t.fail("Pending response rejected since connection got disposed", turn);
  t.finish({ stopReason: "cancelled" }, turn);
  assert.deepEqual(posted.slice(2), [{ type: "done", stopReason: "server restarted" }]);
  // The next turn works as usual.
  const next = t.begin("again");
  t.finish({ sessionId: "s4", stopReason: "end_turn", text: "ok" }, next);
  assert.deepEqual(posted.slice(-2), [
    { type: "text", html: "<p>ok</p>" },
    { type: "done", stopReason: "end_turn" },
  ]);
});

test("an error answer is shown and ends the turn", () => {
  const { t, posted } = transcript();
  const turn = t.begin("hi");
  t.fail("Codev LS is not running", turn);
  assert.deepEqual(posted.slice(1), [
    { type: "error", html: "Codev LS is not running" },
    { type: "done", stopReason: "error" },
  ]);
  t.reset("server restarted"); // nothing running: nothing to end
  assert.equal(posted.length, 3);
});

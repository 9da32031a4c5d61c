// Unit tests of the extension's own logic (no VS Code needed): node --test.
const test = require("node:test");
const assert = require("node:assert/strict");
const logic = require("../../out/logic.js");

test("the server starts as `python -m codev_ls` when a Python is configured", () => {
  assert.deepEqual(logic.serverCommand("codev-ls", "/venv/bin/python"), { command: "/venv/bin/python", args: ["-m", "codev_ls"] });
  assert.deepEqual(logic.serverCommand("/opt/codev-ls", ""), { command: "/opt/codev-ls", args: [] });
  assert.deepEqual(logic.serverCommand(undefined, undefined), { command: "codev-ls", args: [] });
});

test("secrets come from secret storage, never from codev.env", () => {
  const { env, warnings } = logic.serverEnv(
    { PATH: "/bin", HOME: "/root" },
    { CODEV_PROVIDER: "openai", OPENAI_API_KEY: "sk-in-settings", MY_TOKEN: "t", CODEV_DEBUG: true },
    { ANTHROPIC_API_KEY: "sk-secret", OPENAI_API_KEY: undefined },
  );
  assert.equal(env.PATH, "/bin");
  assert.equal(env.CODEV_PROVIDER, "openai");
  assert.equal(env.CODEV_DEBUG, "true");
  assert.equal(env.ANTHROPIC_API_KEY, "sk-secret");
  assert.equal(env.OPENAI_API_KEY, undefined);
  assert.equal(env.MY_TOKEN, undefined);
  assert.equal(warnings.length, 2);
  assert.match(warnings[0], /Set API Key/);
});

test("tool input must be a JSON object, with a message saying why", () => {
  assert.deepEqual(logic.parseToolInput('{"a": 1}'), { ok: true, value: { a: 1 } });
  assert.deepEqual(logic.parseToolInput("  "), { ok: true, value: {} });
  const bad = logic.parseToolInput("{oops");
  assert.equal(bad.ok, false);
  assert.match(bad.error, /not valid JSON/);
  assert.match(logic.parseToolInput("[1]").error, /must be a JSON object/);
});

test("outcomes read as text and one-line summaries", () => {
  const o = { toolUseId: "t", status: "success", content: [{ type: "text", text: "hi" }, { type: "image" }], decisionSource: "config" };
  assert.equal(logic.outcomeText(o), "hi\n[image]");
  assert.equal(logic.outcomeSummary("Read", o), "Read: success (config)");
  assert.equal(logic.outcomeSummary("Bash", { ...o, status: "rejected", decisionSource: undefined }), "Bash: rejected");
});

test("the status bar shows the mode and the running tool", () => {
  assert.equal(logic.statusText("default", []), "$(shield) Codev: default");
  assert.equal(logic.statusText("plan", ["Bash: npm test", "Read: a"]), "$(shield) Codev: plan $(sync~spin) Bash: npm test +1");
});

test("permission actions are recognised by their PROTOCOL.md titles", () => {
  for (const t of ["Allow once", "Allow for this session: Bash(npm test:*)", "Always allow: Edit(src/**)", "Reject"]) {
    assert.ok(logic.isPermissionAction(t), t);
  }
  assert.ok(!logic.isPermissionAction("Maybe"));
});

test("markdown renders safely", () => {
  const html = logic.renderMarkdown("# Title\nSome **bold** and `code` <script>x</script>\n- a\n- [link](https://x.org)\n```\n<b>raw</b>\n```");
  assert.match(html, /<h1>Title<\/h1>/);
  assert.match(html, /<strong>bold<\/strong>/);
  assert.match(html, /<code>code<\/code>/);
  assert.match(html, /&lt;script&gt;/);
  assert.doesNotMatch(html, /<script>/);
  assert.match(html, /<ul>\n<li>a<\/li>/);
  assert.match(html, /<a href="https:\/\/x.org">link<\/a>/);
  assert.match(html, /<pre><code>&lt;b&gt;raw&lt;\/b&gt;<\/code><\/pre>/);
  assert.doesNotMatch(logic.renderMarkdown("[x](javascript:alert(1))"), /href/);
});

test("only held-back project MCP servers are offered for approval, waiting ones first", () => {
  const items = logic.heldMcpServers([
    { name: "zeta", state: "disabled", origin: "project", reason: "rejected by you", target: "node z.js" },
    { name: "time", state: "ready", origin: "project" },
    { name: "mine", state: "needs-approval", origin: "user" },
    { name: "alpha", state: "needs-approval", origin: "project", reason: "not started: the question was dismissed" },
  ]);
  assert.deepEqual(
    items.map((i) => [i.label, i.description]),
    [["alpha", "waiting for approval"], ["zeta", "rejected"]],
  );
  assert.equal(items[1].detail, "node z.js — rejected by you");
  assert.deepEqual(logic.heldMcpServers([]), []);
});

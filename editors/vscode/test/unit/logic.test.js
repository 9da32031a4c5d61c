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
  assert.match(warnings[0], /Set API Key…" \(it takes any name\)/);
});

test("custom secret names go from secret storage to the server's environment", async () => {
  // What "Codev: Set API Key…" records after storing DEEPSEEK_API_KEY and ANTHROPIC_AUTH_TOKEN
  // (and then deleting a custom name again, and storing a known one).
  let recorded = logic.recordSecretName([], "DEEPSEEK_API_KEY", true);
  recorded = logic.recordSecretName(recorded, "ANTHROPIC_AUTH_TOKEN", true);
  recorded = logic.recordSecretName(recorded, "OLD_TOKEN", true);
  recorded = logic.recordSecretName(recorded, "OLD_TOKEN", false);
  recorded = logic.recordSecretName(recorded, "OPENAI_API_KEY", true); // known: not recorded
  assert.deepEqual(recorded, ["ANTHROPIC_AUTH_TOKEN", "DEEPSEEK_API_KEY"]);
  // SecretStorage, as an in-memory map under the extension's keys.
  const storage = new Map([
    ["codev.DEEPSEEK_API_KEY", "sk-deepseek"],
    ["codev.ANTHROPIC_AUTH_TOKEN", "tok-anthropic"],
    ["codev.OPENAI_API_KEY", "sk-openai"],
    ["codev.OLD_TOKEN", "left-behind"],
    ["DEEPSEEK_API_KEY", "not-under-our-prefix"],
  ]);
  const names = logic.secretNames([...recorded, "not a name", 42]);
  assert.deepEqual(names.slice(0, logic.SECRET_KEYS.length), [...logic.SECRET_KEYS]);
  assert.deepEqual(names.slice(logic.SECRET_KEYS.length), ["ANTHROPIC_AUTH_TOKEN", "DEEPSEEK_API_KEY"]);
  const values = await logic.readSecrets(names, async (key) => storage.get(key));
  const { env, warnings } = logic.serverEnv(
    { PATH: "/bin", DEEPSEEK_API_KEY: "from-the-shell" },
    { OPENAI_BASE_URL: "https://api.deepseek.com/v1", DEEPSEEK_API_KEY: "in-settings" },
    values,
  );
  assert.equal(env.DEEPSEEK_API_KEY, "sk-deepseek"); // the stored secret wins over the shell's
  assert.equal(env.ANTHROPIC_AUTH_TOKEN, "tok-anthropic");
  assert.equal(env.OPENAI_API_KEY, "sk-openai");
  assert.equal(env.OPENAI_BASE_URL, "https://api.deepseek.com/v1");
  assert.equal(env.OLD_TOKEN, undefined); // deleted names are no longer read
  assert.equal(env.TAVILY_API_KEY, undefined);
  assert.deepEqual(warnings, [
    'codev.env.DEEPSEEK_API_KEY looks like a secret and was ignored: store it with "Codev: Set API Key…" (it takes any name) instead.',
  ]);
});

test("the key picker offers known, recorded and typed names", () => {
  const stored = new Set(["OPENAI_API_KEY", "DEEPSEEK_API_KEY"]);
  const items = logic.secretPickItems("", ["DEEPSEEK_API_KEY"], stored);
  assert.deepEqual(
    items.map((i) => [i.label, i.description]),
    [...logic.SECRET_KEYS.map((k) => [k, k === "OPENAI_API_KEY" ? "stored" : ""]), ["DEEPSEEK_API_KEY", "custom, stored"]],
  );
  const typed = logic.secretPickItems(" ANTHROPIC_AUTH_TOKEN ", ["DEEPSEEK_API_KEY"], stored);
  assert.deepEqual(typed[0], { label: "ANTHROPIC_AUTH_TOKEN", description: "a new name: store a secret under it", name: "ANTHROPIC_AUTH_TOKEN" });
  // A typed name that is already listed is not offered twice; a bad one cannot be picked.
  assert.equal(logic.secretPickItems("JINA_API_KEY", [], stored).filter((i) => i.label === "JINA_API_KEY").length, 1);
  const bad = logic.secretPickItems("my key", [], stored)[0];
  assert.equal(bad.name, "");
  assert.match(bad.description, /not a valid environment variable name/);
  assert.ok(logic.isEnvName("_X1") && !logic.isEnvName("1X") && !logic.isEnvName("A-B"));
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

test("permission prompts get short buttons, and the answer maps back to the server's action", () => {
  const actions = [
    { title: "Allow once" },
    { title: "Allow for this session: Bash(npm test:*)" },
    { title: "Always allow: Bash(npm test:*)" },
    { title: "Reject" },
  ];
  const prompt = logic.shortPermissionPrompt("Codev wants to use Bash: run `npm test`", actions);
  assert.deepEqual(prompt.labels, ["Allow once", "This session", "Always", "Reject"]);
  assert.equal(
    prompt.message,
    "Codev wants to use Bash: run `npm test`\n\n(This session: Bash(npm test:*) · Always: Bash(npm test:*))",
  );
  assert.equal(logic.originalAction(prompt, "This session"), actions[1]);
  assert.equal(logic.originalAction(prompt, "Always"), actions[2]);
  assert.equal(logic.originalAction(prompt, "Allow once"), actions[0]);
  assert.equal(logic.originalAction(prompt, "Reject"), actions[3]);
  assert.equal(logic.originalAction(prompt, undefined), null); // dismissed = rejected
  assert.equal(logic.originalAction(prompt, "Al…"), null);
  // Where no rule is offered, the buttons are the ones left and the message is unchanged.
  const mcp = logic.shortPermissionPrompt("Start the MCP server probe?", [{ title: "Allow once" }, { title: "Always allow" }, { title: "Reject" }]);
  assert.deepEqual(mcp.labels, ["Allow once", "Always", "Reject"]);
  assert.equal(mcp.message, "Start the MCP server probe?");
  // Anything else is shown as it came.
  assert.equal(logic.shortPermissionPrompt("Which one?", [{ title: "Option A" }, { title: "Reject" }]), null);
  assert.equal(logic.shortPermissionPrompt("Which one?", [{ title: "Allow once" }]), null); // no Reject
  assert.equal(logic.shortPermissionPrompt("Which one?", [{ title: "Allow onceX" }, { title: "Reject" }]), null);
  assert.equal(logic.shortPermissionPrompt("Hi", []), null);
  assert.equal(logic.shortPermissionPrompt("Hi", undefined), null);
});

test("a partly accepted edit says which changes landed", () => {
  const base = { toolUseId: "t", status: "success", content: "ok" };
  assert.equal(
    logic.outcomeDetail({ ...base, meta: { partial: true, hunksApplied: [0], hunksRejected: [1] } }),
    "change 1 of 2 applied, 2 refused",
  );
  assert.equal(logic.outcomeDetail({ ...base, meta: { partial: false, hunksApplied: [0, 1], hunksRejected: [] } }), "");
  assert.equal(logic.outcomeDetail(base), "");
});

test("an explanation reads as text", () => {
  const text = logic.explanationText({
    tool: "Bash",
    input: { command: "npm test" },
    mode: "default",
    decision: "ask",
    source: "config",
    rule: null,
    reason: "Bash commands need approval",
    wouldOffer: ["Bash(npm test:*)"],
    trace: ["no rule matched"],
  });
  assert.equal(
    text,
    'Bash {"command":"npm test"}\nDecision: ask (mode default, source config)\nWhy: Bash commands need approval\n' +
      '"Always allow" would save: Bash(npm test:*)\nSteps:\n  - no rule matched',
  );
  assert.equal(logic.explanationText({ tool: "Nope", input: {}, error: "No such tool: Nope." }), "Nope {}\nCannot explain: No such tool: Nope.");
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

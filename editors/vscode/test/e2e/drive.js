// Drives a real VS Code (code-server) in headless Chromium with Playwright, as a user would.
//
//   node drive.js SCENARIO URL WORKSPACE SCREENSHOT_DIR
//
// Scenarios:
//   bash-permission  "Codev: Run Tool…" → Bash writing a file → the server asks (a notification
//                    with short buttons) → click "Allow once"
//   edits            three edits of files opened in the editor, each through the refactor preview:
//                    apply  — click the change's row (the side-by-side diff opens), tick, Apply;
//                    discard — Discard;
//                    partial — a two-change edit with only the first change ticked, Apply.
//                    After each: the outcome's notification, whether the tab is dirty, the editor's
//                    text (the test checks the disk)
//   chat             "Codev: Restart Server", then the chat view: a streamed answer, and Stop on an
//                    answer the fake model holds back
// Prints one JSON line with what happened.
const { chromium } = require("playwright-core");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const [scenario, url, workspace, shots] = process.argv.slice(2);

function log(...a) {
  process.stderr.write(a.join(" ") + "\n");
}

async function waitFor(fn, timeout = 30000, what = "condition") {
  const t0 = Date.now();
  while (Date.now() - t0 < timeout) {
    if (await fn()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const quickInput = (page) => page.locator(".quick-input-widget input");

async function runCommand(page, title) {
  await page.keyboard.press("F1");
  const input = quickInput(page);
  await input.waitFor({ state: "visible", timeout: 15000 });
  await input.fill(">" + title);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ timeout: 15000 });
  await page.keyboard.press("Enter");
}

/** Quick Open (F1 without the ">"): open a workspace file in the editor, and wait for its tab. */
async function openFile(page, name) {
  await page.keyboard.press("F1");
  const input = quickInput(page);
  await input.waitFor({ state: "visible", timeout: 15000 });
  await input.fill(name);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor({ timeout: 15000 });
  await page.keyboard.press("Enter");
  await tab(page, name).waitFor({ timeout: 15000 });
  await page.locator(".editor-group-container.active .monaco-editor .view-line").first().waitFor({ timeout: 15000 });
}

/** Pick a tool in "Codev: Run Tool…" and type its JSON input. */
async function pickAndType(page, label, text) {
  const input = quickInput(page);
  await input.waitFor({ state: "visible", timeout: 30000 });
  await input.fill(label);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: new RegExp(`^${label}`) }).first().waitFor({ timeout: 30000 });
  await page.keyboard.press("Enter");
  // The input box for the JSON comes next (the same widget, now with a prompt).
  await page.locator(".quick-input-widget .quick-input-message", { hasText: "input (a JSON object)" }).waitFor({ timeout: 15000 });
  await input.fill(text);
  await page.keyboard.press("Enter");
}

async function runTool(page, name, input) {
  await runCommand(page, "Codev: Run Tool…");
  await pickAndType(page, name, JSON.stringify(input));
}

const toast = (page, text) => page.locator(".notifications-toasts .notification-toast", { hasText: text });

/** The text of the notification that starts with `prefix` (e.g. "Edit:"), once it appears. */
async function notification(page, prefix) {
  const t = toast(page, prefix).first();
  await t.waitFor({ timeout: 60000 });
  return (await t.locator(".notification-list-item-message").innerText()).trim();
}

async function clearNotifications(page) {
  await runCommand(page, "Notifications: Clear All Notifications");
  await waitFor(async () => (await page.locator(".notifications-toasts .notification-toast").count()) === 0, 10000, "no notifications");
}

const tab = (page, name) => page.locator(".tabs-container .tab", { has: page.locator(".label-name", { hasText: new RegExp(`^${name.replace(".", "\\.")}$`) }) }).first();

async function isDirty(page, name) {
  return (await tab(page, name).getAttribute("class")).split(/\s+/).includes("dirty");
}

/** The active editor's lines, in order (the DOM keeps rendered lines in any order: sort by top). */
async function editorText(page) {
  return page.evaluate(() => {
    const editor = document.querySelector(".editor-group-container.active .monaco-editor:not(.original-in-monaco-diff-editor)");
    const lines = [...editor.querySelectorAll(".view-lines .view-line")].map((el) => ({
      top: parseFloat(el.style.top || "0"),
      text: el.textContent.replace(/\u00a0/g, " "),
    }));
    return lines.sort((a, b) => a.top - b.top).map((l) => l.text);
  });
}

const previewButton = (page, name) => page.locator(".monaco-button", { hasText: new RegExp(`^${name}$`) }).first();

/** Read `file`, then Edit it: the refactor preview opens (a preview is the approval). */
async function editInPreview(page, file, edit) {
  await openFile(page, file);
  await runTool(page, "Read", { file_path: path.join(workspace, file) });
  await notification(page, "Read:");
  await clearNotifications(page);
  await runTool(page, "Edit", { file_path: path.join(workspace, file), ...edit });
  await previewButton(page, "Apply").waitFor({ timeout: 60000 });
}

/** The preview's change rows (not the file's row): checkboxes start unticked (needsConfirmation). */
const changeRows = (page) => page.locator(".bulk-edit-panel .monaco-list-row[aria-level='2']");

/** After the outcome: clear it, re-show the file, and report the outcome, dirtiness and text. */
async function afterEdit(page, file) {
  const outcome = await notification(page, "Edit:");
  await clearNotifications(page);
  await openFile(page, file);
  await page.waitForTimeout(300);
  return { outcome, dirty: await isDirty(page, file), editor: await editorText(page) };
}

async function editsScenario(page, result) {
  // 1. Apply: the change's row shows the side-by-side diff; tick it and apply.
  await editInPreview(page, "greeting.py", { old_string: "hello", new_string: "hello from codev" });
  result.steps.push("preview-shown");
  // Changes that need confirmation start unticked: tick them (the file's box ticks them all),
  // then the change's row shows the change in the side-by-side diff.
  const boxes = page.locator(".bulk-edit-panel input.edit-checkbox");
  for (let i = 0; i < (await boxes.count()); i++) {
    if (!(await boxes.nth(i).isChecked())) await boxes.nth(i).check();
  }
  await changeRows(page).first().locator(".monaco-highlighted-label").click();
  const diff = page.locator(".editor-group-container .monaco-diff-editor").first();
  await diff.waitFor({ timeout: 15000 });
  await diff.locator(".view-line", { hasText: "hello from codev" }).first().waitFor({ timeout: 15000 });
  await page.waitForTimeout(500);
  await page.screenshot({ path: path.join(shots, "vscode-edit-diff.png") });
  await previewButton(page, "Apply").click();
  result.apply = { diffEditor: true, ...(await afterEdit(page, "greeting.py")) };
  result.steps.push("applied");

  // 2. Discard: the edit is rejected; nothing changes.
  await editInPreview(page, "farewell.py", { old_string: "bye", new_string: "goodbye" });
  await previewButton(page, "Discard").click();
  result.discard = await afterEdit(page, "farewell.py");
  result.steps.push("discarded");

  // 3. Two changes, only the first ticked.
  await editInPreview(page, "two.py", { old_string: '"value"', new_string: '"VALUE"', replace_all: true });
  const rows = changeRows(page);
  await waitFor(async () => (await rows.count()) === 2, 15000, "two change rows");
  const first = rows.nth(0).locator("input.edit-checkbox");
  if (!(await first.isChecked())) await first.check();
  if (await rows.nth(1).locator("input.edit-checkbox").isChecked()) await rows.nth(1).locator("input.edit-checkbox").uncheck();
  await page.waitForTimeout(300);
  await previewButton(page, "Apply").click();
  result.partial = { hunkRows: 2, ...(await afterEdit(page, "two.py")) };
  result.steps.push("partly-applied");
}

/** The chat view's frame (a webview: an iframe inside an iframe). */
async function chatFrame(page) {
  let found = null;
  await waitFor(async () => {
    for (const f of page.frames()) {
      try {
        if (await f.$("#log")) {
          found = f;
          return true;
        }
      } catch {}
    }
    return false;
  }, 30000, "the chat view");
  return found;
}

async function chatScenario(page, result) {
  // The restarted server is a new client: its chat events must reach the view too.
  await runCommand(page, "Codev: Restart Server");
  const item = page.locator(".statusbar-item", { hasText: "Codev:" }).first();
  await waitFor(async () => (await item.innerText()).includes("restarting"), 15000, "the restart to begin");
  await waitFor(async () => (await item.innerText()).includes("Codev: default"), 60000, "the restarted server");
  result.steps.push("restarted");
  await runCommand(page, "Codev: Ask…");
  const input = quickInput(page);
  await page.locator(".quick-input-widget .quick-input-message", { hasText: "Ask Codev" }).waitFor({ timeout: 15000 });
  await input.fill("say hello");
  await page.keyboard.press("Enter");
  const frame = await chatFrame(page);
  await frame.locator(".turn.text", { hasText: "Hello from the fake model." }).waitFor({ timeout: 60000 });
  await frame.locator(".tool", { hasText: "— end_turn" }).waitFor({ timeout: 30000 });
  result.first = await frame.locator("#log").innerText();
  result.steps.push("answered");
  // A second turn, typed in the view; the fake model holds it after "Thinking".
  await frame.locator("#prompt").fill("think slowly");
  await frame.locator("#send").click();
  await frame.locator(".turn.text", { hasText: "Thinking" }).nth(0).waitFor({ timeout: 60000 });
  result.streamed = await frame.locator(".turn.text").last().innerText();
  result.stopEnabledWhileStreaming = await frame.locator("#stop").isEnabled();
  await frame.locator("#stop").click();
  await frame.locator(".tool", { hasText: "— cancelled" }).waitFor({ timeout: 30000 });
  result.stopEnabledAfter = await frame.locator("#stop").isEnabled();
  result.log = await frame.locator("#log").innerText();
  result.steps.push("stopped");
}

async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "codev-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    viewport: { width: 1400, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = context.pages()[0] || (await context.newPage());
  const result = { scenario, steps: [] };
  try {
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: 60000 });
    await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
    result.steps.push("workbench");
    // The status bar item appears once the extension has started the server.
    await page.locator(".statusbar-item", { hasText: "Codev:" }).first().waitFor({ timeout: 60000 });
    result.steps.push("extension-active");

    if (scenario === "bash-permission") {
      const target = path.join(workspace, "from-vscode.txt");
      await runTool(page, "Bash", { command: `echo written-by-codev > ${target}` });
      const prompt = toast(page, "Codev wants to use Bash").first();
      await prompt.waitFor({ timeout: 60000 });
      result.steps.push("prompt-shown");
      result.prompt = (await prompt.locator(".notification-list-item-message").innerText()).slice(0, 3000);
      result.buttons = await prompt.locator(".monaco-button").allInnerTexts();
      await page.waitForTimeout(800); // let the toast finish fading in
      await page.screenshot({ path: path.join(shots, "vscode-permission-prompt.png") });
      await prompt.locator(".monaco-button", { hasText: /^Allow once$/ }).click();
      result.steps.push("allowed");
      await waitFor(() => fs.existsSync(target), 30000, "the file on disk");
      result.steps.push("file-written");
    } else if (scenario === "edits") {
      await editsScenario(page, result);
    } else if (scenario === "chat") {
      await chatScenario(page, result);
    } else {
      throw new Error(`unknown scenario ${scenario}`);
    }
    result.ok = true;
  } catch (e) {
    result.ok = false;
    result.error = String(e && e.stack ? e.stack : e);
    try {
      await page.screenshot({ path: path.join(shots, `vscode-${scenario}-failure.png`) });
    } catch {}
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(result) + "\n");
  process.exit(result.ok ? 0 : 1);
}

main();

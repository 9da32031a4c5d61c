-- Drives a real headless Neovim with the Codev plugin against the real server.
--
--   nvim --headless --clean -l drive.lua
--
-- Environment: CODEV_PLUGIN (the plugin folder), CODEV_CMD (JSON list: how to start the server),
-- CODEV_WS (the workspace), CODEV_SCENARIO (allow-edit | reject-edit | cancel-bash | mcp-approve |
-- mode-explain | health | progress | chat), CODEV_RESULT (where to write the JSON result),
-- CODEV_SETUP (optional JSON merged into setup()). The Python test checks the disk and processes.
local plugin = assert(os.getenv('CODEV_PLUGIN'))
local ws = assert(os.getenv('CODEV_WS'))
local scenario = assert(os.getenv('CODEV_SCENARIO'))
local result_path = assert(os.getenv('CODEV_RESULT'))
local cmd = vim.json.decode(assert(os.getenv('CODEV_CMD')))

vim.opt.runtimepath:prepend(plugin)
vim.cmd('runtime plugin/codev.lua')
vim.o.columns = 120
vim.o.lines = 40

local result = { scenario = scenario, steps = {} }
local function step(name)
  table.insert(result.steps, name)
end
local function finish(ok, err)
  result.ok = ok
  result.error = err
  local f = assert(io.open(result_path, 'w'))
  f:write(vim.json.encode(result))
  f:close()
end

local codev = require('codev')
local prompt = require('codev.prompt')

local function wait(ms, pred, what)
  if not vim.wait(ms, pred, 50) then
    error('timed out waiting for ' .. what)
  end
end

--- Answer the plugin's permission float by pressing `key` in it, as a user would.
local function press_in_prompt(key)
  wait(20000, function()
    return prompt.current ~= nil
  end, 'the permission prompt')
  local cur = prompt.current
  result.prompt_lines = vim.api.nvim_buf_get_lines(cur.buf, 0, -1, false)
  result.prompt_in_float = vim.api.nvim_win_get_config(cur.win).relative == 'editor'
  assert(vim.api.nvim_get_current_win() == cur.win, 'the prompt window has the focus')
  vim.api.nvim_feedkeys(key, 'xt', false)
  wait(5000, function()
    return prompt.current == nil
  end, 'the prompt to close after pressing ' .. key)
  step('answered ' .. key)
end

local function run_tool(name, input)
  local outcome
  codev.run_tool(name, vim.json.encode(input), function(o)
    outcome = o
  end)
  return function()
    return outcome
  end
end

--- Record every vim.notify message (the plugin's one-line messages), in order.
local notified = {}
vim.notify = function(msg, level)
  notified[#notified + 1] = { msg = msg, level = level }
end

local function buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

local ok, err = pcall(function()
  local extra = os.getenv('CODEV_SETUP')
  codev.setup(vim.tbl_extend('force', { cmd = cmd, progress = false }, extra and vim.json.decode(extra) or {}))
  local file = ws .. '/notes.txt'
  vim.cmd.edit(vim.fn.fnameescape(file))
  wait(20000, function()
    local c = codev.get_client()
    return c ~= nil and c.initialized
  end, 'the Codev client to start')
  step('client')
  local buf = vim.api.nvim_get_current_buf()

  if scenario == 'allow-edit' or scenario == 'reject-edit' then
    local read = run_tool('Read', { file_path = file })
    wait(20000, read, 'Read')
    step('read ' .. read().status)
    local edit = run_tool('Edit', { file_path = file, old_string = 'first line', new_string = 'edited by codev' })
    press_in_prompt(scenario == 'allow-edit' and 'a' or 'r')
    wait(20000, edit, 'Edit outcome')
    result.outcome = edit()
    result.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    result.modified = vim.bo[buf].modified
  elseif scenario == 'cancel-bash' then
    local bash = run_tool('Bash', { command = 'sleep 31.337; touch never.txt', timeout = 120000 })
    press_in_prompt('a')
    -- Let the command start, then interrupt it from the editor.
    vim.wait(1500, function()
      return false
    end, 50)
    vim.cmd('CodevCancel')
    wait(20000, bash, 'the interrupted Bash outcome')
    result.outcome = bash()
  elseif scenario == 'mcp-approve' then
    -- The project's .mcp.json server is asked about at start-up: dismiss that question.
    press_in_prompt('q')
    local function mcp_state()
      local resp = codev.get_client():request_sync('codev/mcpStatus', vim.empty_dict(), 3000)
      local s = resp and resp.result and resp.result.servers[1]
      return s and s.state, s and s.reason or ''
    end
    wait(10000, function()
      local state, reason = mcp_state()
      return state == 'needs-approval' and reason:find('dismissed') ~= nil
    end, 'the server to wait after the dismissal')
    step('dismissed')
    -- :CodevMcpApprove without a name offers the held servers (vim.ui.select, answered here).
    vim.ui.select = function(items, opts, on_choice)
      result.offered = vim.tbl_map(function(item)
        return opts.format_item(item)
      end, items)
      on_choice(items[1], 1)
    end
    vim.cmd('CodevMcpApprove')
    press_in_prompt('a')
    wait(30000, function()
      return mcp_state() == 'ready'
    end, 'the MCP server to be ready')
    result.mcp_state = mcp_state()
  elseif scenario == 'mode-explain' then
    -- The status line shows a mode without :CodevMode (init_options, then the server's answer).
    wait(5000, function()
      return codev.status():find('[', 1, true) ~= nil
    end, 'the status line to show the mode')
    result.status_at_start = codev.status()
    local function server_mode()
      return codev.get_client():request_sync('codev/permissionMode', vim.empty_dict(), 3000).result.mode
    end
    result.server_mode_at_start = server_mode()
    vim.cmd('CodevMode default')
    wait(5000, function()
      return codev.status() == 'Codev[default]'
    end, ':CodevMode to change the status line')
    result.status_after_mode = codev.status()
    result.server_mode_after = server_mode()
    codev.last_explanation = nil
    vim.cmd([[CodevExplain Bash {"command": "git push origin main"}]])
    wait(10000, function()
      return codev.last_explanation ~= nil
    end, 'the explanation')
    result.explanation = codev.last_explanation
    result.explain_float = false
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      local b = vim.api.nvim_win_get_buf(win)
      if vim.api.nvim_win_get_config(win).relative ~= '' and buffer_text(b):find('Decision:', 1, true) then
        result.explain_float = true
      end
    end
  elseif scenario == 'health' then
    -- In a float: a headless Neovim cannot draw the tab page :checkhealth opens by default.
    vim.g.health = { style = 'float' }
    vim.cmd('checkhealth codev')
    result.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  elseif scenario == 'progress' then
    -- A Bash that prints, waits (Bash reports its output after 2 s) and prints again (read-only:
    -- it runs without asking): its progress reaches LspProgress, the status line and the messages
    -- (progress = 'notify' here).
    local seen = {}
    local bash = run_tool('Bash', { command = 'echo step-one; sleep 2.6; echo step-two', description = 'two steps' })
    wait(20000, function()
      local s = codev.status()
      if s ~= 'Codev[default]' and not vim.tbl_contains(seen, s) then
        seen[#seen + 1] = s
      end
      return bash() ~= nil
    end, 'the Bash outcome')
    result.outcome = bash()
    result.statuses = seen
    result.status_after = codev.status()
    result.messages = vim.tbl_map(function(n)
      return n.msg
    end, notified)
  elseif scenario == 'chat' then
    vim.cmd('CodevAsk say hello')
    local chat = require('codev.chat')
    wait(20000, function()
      return chat.buf and buffer_text(chat.buf):find('— end_turn', 1, true) ~= nil
    end, 'the first answer')
    result.first = buffer_text(chat.buf)
    result.chat_filetype = vim.bo[chat.buf].filetype
    vim.cmd('CodevAsk think slowly')
    wait(20000, function()
      return chat.busy and buffer_text(chat.buf):find('Thinking', 1, true) ~= nil
    end, 'the streamed start of the second answer')
    result.streamed = buffer_text(chat.buf)
    -- <C-c> in the chat window stops the turn, as a user would press it.
    local win = vim.fn.bufwinid(chat.buf)
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<C-c>', true, false, true), 'x', false)
    wait(20000, function()
      return buffer_text(chat.buf):find('— cancelled', 1, true) ~= nil
    end, 'the cancelled turn')
    result.busy_after = chat.busy
    result.final = buffer_text(chat.buf)
  else
    error('unknown scenario ' .. scenario)
  end

  local client = codev.get_client()
  client:stop()
  wait(10000, function()
    return #vim.lsp.get_clients() == 0
  end, 'the client to stop')
  step('stopped')
end)
finish(ok, not ok and tostring(err) or nil)
vim.cmd('qall!')

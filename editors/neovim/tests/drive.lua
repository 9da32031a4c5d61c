-- Drives a real headless Neovim with the Codev plugin against the real server.
--
--   nvim --headless --clean -l drive.lua
--
-- Environment: CODEV_PLUGIN (the plugin folder), CODEV_CMD (JSON list: how to start the server),
-- CODEV_WS (the workspace), CODEV_SCENARIO (allow-edit | reject-edit | cancel-bash | mcp-approve),
-- CODEV_RESULT (where to write the JSON result). The Python test checks the disk and processes.
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

local ok, err = pcall(function()
  codev.setup({ cmd = cmd, progress = false })
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

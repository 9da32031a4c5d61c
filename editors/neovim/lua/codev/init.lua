-- Codev for Neovim: the LSP client glue around Codev LS.
--
--   require('codev').setup({
--     cmd = { 'codev-ls' },            -- how to start the server
--     permission_mode = 'default',     -- default | acceptEdits | bypassPermissions | plan | auto
--     keymaps = { ask = '<leader>ca', tool = '<leader>ct', mode = '<leader>cm', cancel = '<leader>cc' },
--     progress = 'echo',               -- 'echo' | 'notify' | false
--   })
--
-- Without setup(), `vim.lsp.enable('codev_ls')` uses lsp/codev_ls.lua as it is.
local M = {}

M.config = {
  cmd = nil,
  permission_mode = nil,
  keymaps = {},
  progress = 'echo',
  enable = true,
}

-- What the status line shows: the mode and the running tool.
M.state = { mode = nil, running = {} }

local NAME = 'codev_ls'

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = 'Codev' })
end

--- The base config: lsp/codev_ls.lua merged with what setup() was given.
function M.lsp_config()
  -- vim.lsp.config resolves lsp/codev_ls.lua from 'runtimepath' plus vim.lsp.config() overrides.
  local cfg = vim.deepcopy(vim.lsp.config[NAME] or {})
  if M.config.cmd then
    cfg.cmd = M.config.cmd
  end
  if M.config.permission_mode then
    cfg.init_options = vim.tbl_extend('force', cfg.init_options or {}, { permissionMode = M.config.permission_mode })
  end
  return cfg
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', M.config, opts or {})
  local overrides = {}
  if M.config.cmd then
    overrides.cmd = M.config.cmd
  end
  if M.config.permission_mode then
    overrides.init_options = { permissionMode = M.config.permission_mode }
  end
  if next(overrides) then
    vim.lsp.config(NAME, overrides)
  end
  if M.config.enable then
    vim.lsp.enable(NAME)
  end
  local km = M.config.keymaps or {}
  local maps = {
    { km.ask, function() M.ask() end, 'Codev: ask' },
    { km.tool, function() M.run_tool_interactive() end, 'Codev: run a tool' },
    { km.mode, function() M.mode() end, 'Codev: permission mode' },
    { km.cancel, function() M.cancel() end, 'Codev: cancel' },
  }
  for _, m in ipairs(maps) do
    if m[1] then
      vim.keymap.set('n', m[1], m[2], { desc = m[3] })
    end
  end
  require('codev.progress').setup(M.config.progress)
end

--- on_init of the Codev client (lsp/codev_ls.lua): the status line shows the mode from the start —
--- the one asked for in init_options, then the one the server says it runs in (its settings may
--- have decided otherwise, or the client asked for none).
function M.on_init(client)
  local opts = client.config.init_options or {}
  if type(opts.permissionMode) == 'string' then
    M.state.mode = opts.permissionMode
  end
  client:request('codev/permissionMode', vim.empty_dict(), function(err, res)
    if not err and type(res) == 'table' and res.mode then
      M.state.mode = res.mode
      vim.cmd.redrawstatus()
    end
  end)
end

--- The running Codev client (of the current buffer first), or nil.
function M.get_client()
  local clients = vim.lsp.get_clients({ name = NAME, bufnr = 0 })
  if #clients == 0 then
    clients = vim.lsp.get_clients({ name = NAME })
  end
  return clients[1]
end

--- The Codev client, starting one for the current buffer / folder when none runs.
function M.ensure_client()
  local client = M.get_client()
  if client then
    return client
  end
  local cfg = M.lsp_config()
  cfg.name = NAME
  if not cfg.root_dir then
    local root = vim.fs.root(0, cfg.root_markers or { '.git' })
    cfg.root_dir = root or vim.fn.getcwd()
  end
  local id = vim.lsp.start(cfg, { bufnr = vim.api.nvim_get_current_buf(), reuse_client = function(c, conf)
    return c.name == NAME and c.root_dir == conf.root_dir
  end })
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- Send a request to Codev; `on_result(result)` is called on success, errors are shown.
function M.request(method, params, on_result, on_error)
  local client = M.ensure_client()
  if not client then
    notify('Codev LS is not running and could not be started (see :checkhealth codev)', vim.log.levels.ERROR)
    return nil
  end
  local ok, id = client:request(method, params, function(err, result)
    if err then
      if on_error then
        on_error(err)
      else
        notify(('%s failed: %s'):format(method, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      end
      return
    end
    if on_result then
      on_result(result)
    end
  end)
  return ok and id or nil
end

local function decode(json)
  local ok, value = pcall(vim.json.decode, json, { luanil = { object = true, array = true } })
  if not ok or type(value) ~= 'table' then
    notify('the tool input must be a JSON object, e.g. {"file_path": "/abs/path"}', vim.log.levels.ERROR)
    return nil
  end
  if vim.tbl_isempty(value) then
    return vim.empty_dict()
  end
  return value
end

--- Show a tool outcome: a one-line message, and the content in a floating preview
--- (closed by moving the cursor) — never a multi-line message that stops for "Press ENTER".
function M.show_outcome(name, outcome)
  local content = outcome.content
  if type(content) == 'table' then
    local parts = {}
    for _, block in ipairs(content) do
      parts[#parts + 1] = block.type == 'text' and block.text or ('[' .. tostring(block.type) .. ']')
    end
    content = table.concat(parts, '\n')
  end
  local header = ('%s: %s%s'):format(name, outcome.status, outcome.decisionSource and (' (' .. outcome.decisionSource .. ')') or '')
  local level = outcome.status == 'success' and vim.log.levels.INFO or vim.log.levels.WARN
  M.last_outcome = outcome
  local lines = vim.split(content or '', '\n', { plain = true })
  if #lines == 1 and #lines[1] < vim.o.columns - #header - 16 then
    notify(header .. (lines[1] ~= '' and (': ' .. lines[1]) or ''), level)
    return
  end
  notify(header, level)
  vim.lsp.util.open_floating_preview(lines, 'text', {
    border = 'rounded',
    title = ' ' .. header .. ' ',
    max_height = math.floor(vim.o.lines * 0.6),
    max_width = math.floor(vim.o.columns * 0.8),
    focus_id = 'codev_outcome',
  })
end

--- :CodevTool NAME JSON — run one tool through the engine.
function M.run_tool(name, json, on_done)
  if not name or name == '' then
    notify('usage: :CodevTool NAME {json}', vim.log.levels.ERROR)
    return
  end
  local input = decode(json or '{}')
  if not input then
    return
  end
  return M.request('codev/runTool', { name = name, input = input }, function(outcome)
    M.show_outcome(name, outcome)
    if on_done then
      on_done(outcome)
    end
  end)
end

function M.run_tool_interactive()
  vim.ui.select(M.tool_names(), { prompt = 'Codev tool' }, function(name)
    if not name then
      return
    end
    vim.ui.input({ prompt = name .. ' input (JSON): ', default = '{}' }, function(json)
      if json then
        M.run_tool(name, json)
      end
    end)
  end)
end

--- Tool names from codev/listTools (cached; filled on first use).
function M.tool_names()
  if M._tool_names then
    return M._tool_names
  end
  local client = M.ensure_client()
  if not client then
    return {}
  end
  local resp = client:request_sync('codev/listTools', vim.empty_dict(), 3000)
  local names = {}
  if resp and resp.result then
    for _, t in ipairs(resp.result.tools or {}) do
      names[#names + 1] = t.name
    end
  end
  M._tool_names = names
  return names
end

--- :CodevMode [mode] — show or set the permission mode.
function M.mode(mode)
  if mode then
    M.request('codev/permissionMode', { mode = mode }, function(res)
      M.state.mode = res.mode
      notify('permission mode: ' .. res.mode)
    end)
    return
  end
  vim.ui.select({ 'default', 'acceptEdits', 'bypassPermissions', 'plan', 'auto' }, { prompt = 'Codev permission mode' }, function(choice)
    if choice then
      M.mode(choice)
    end
  end)
end

--- The codev/explainPermission answer (data) as lines for a person.
function M.format_explanation(res)
  local lines = { ('%s %s'):format(res.tool or '?', vim.json.encode(res.input or vim.empty_dict())) }
  if type(res.error) == 'string' then
    lines[#lines + 1] = 'Cannot explain: ' .. res.error
    return lines
  end
  local function set(v)
    return v ~= nil and v ~= vim.NIL and v ~= ''
  end
  lines[#lines + 1] = ('Decision: %s (mode %s%s%s)'):format(
    tostring(res.decision),
    tostring(res.mode),
    set(res.source) and (', source ' .. res.source) or '',
    set(res.rule) and (', rule ' .. res.rule) or ''
  )
  if set(res.reason) then
    lines[#lines + 1] = 'Why: ' .. res.reason
  end
  if type(res.wouldOffer) == 'table' and #res.wouldOffer > 0 then
    lines[#lines + 1] = '"Always allow" would save: ' .. table.concat(res.wouldOffer, ', ')
  end
  if type(res.trace) == 'table' and #res.trace > 0 then
    lines[#lines + 1] = 'Steps:'
    for _, step in ipairs(res.trace) do
      lines[#lines + 1] = '  - ' .. tostring(step)
    end
  end
  if set(res.note) then
    lines[#lines + 1] = 'Note: ' .. res.note
  end
  return lines
end

--- :CodevExplain NAME JSON — what would decide this use, and why (in a floating window).
function M.explain(name, json, on_done)
  if not name or name == '' then
    notify('usage: :CodevExplain NAME {json}', vim.log.levels.ERROR)
    return
  end
  local input = decode(json or '{}')
  if not input then
    return
  end
  M.request('codev/explainPermission', { name = name, input = input }, function(res)
    local lines = type(res) == 'table' and M.format_explanation(res) or { tostring(res) }
    M.last_explanation = lines
    notify(lines[2] or lines[1])
    vim.lsp.util.open_floating_preview(lines, 'text', {
      border = 'rounded',
      title = ' Codev: why ',
      max_width = math.floor(vim.o.columns * 0.8),
      focus_id = 'codev_explain',
    })
    if on_done then
      on_done(lines)
    end
  end)
end

--- The project MCP servers held back (waiting for approval, or rejected), waiting ones first.
function M.held_mcp_servers(servers)
  local held = {}
  for _, s in ipairs(servers or {}) do
    if s.origin == 'project' and (s.state == 'needs-approval' or s.state == 'disabled') then
      held[#held + 1] = s
    end
  end
  table.sort(held, function(a, b)
    if a.state ~= b.state then
      return a.state == 'needs-approval'
    end
    return a.name < b.name
  end)
  return held
end

--- :CodevMcpApprove [name] — be asked again about a project MCP server (the server
--- asks its own question: the permission float). Without a name, pick one.
function M.mcp_approve(name)
  local function approve(server)
    M.request('codev/mcpApprove', { name = server }, function(res)
      notify(res.message)
    end)
  end
  if name then
    approve(name)
    return
  end
  M.request('codev/mcpStatus', vim.empty_dict(), function(status)
    local held = M.held_mcp_servers(status.servers)
    if #held == 0 then
      notify('no project MCP server is waiting for approval or rejected')
      return
    end
    vim.ui.select(held, {
      prompt = 'Ask again about which MCP server?',
      format_item = function(s)
        return ('%s (%s)%s'):format(s.name, s.state == 'disabled' and 'rejected' or 'waiting', s.reason and (' — ' .. s.reason) or '')
      end,
    }, function(choice)
      if choice then
        approve(choice.name)
      end
    end)
  end)
end

--- :CodevAsk [prompt] — open the chat buffer and send a prompt.
function M.ask(prompt)
  if prompt then
    require('codev.chat').send(prompt)
    return
  end
  vim.ui.input({ prompt = 'Ask Codev: ' }, function(text)
    if text and text ~= '' then
      require('codev.chat').send(text)
    end
  end)
end

--- Interrupt everything Codev is running (tools and chat turns).
function M.cancel()
  M.request('codev/cancel', vim.empty_dict(), function() end)
end

--- A status-line component: "Codev[acceptEdits] Bash: running…".
function M.status()
  local parts = { 'Codev' .. (M.state.mode and ('[' .. M.state.mode .. ']') or '') }
  for _, title in pairs(M.state.running) do
    parts[#parts + 1] = title
    break
  end
  return table.concat(parts, ' ')
end

return M

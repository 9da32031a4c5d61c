-- User commands of the Codev plugin. Loaded once by Neovim; the work is in lua/codev/.
if vim.g.loaded_codev then
  return
end
vim.g.loaded_codev = true

local function codev()
  return require('codev')
end

vim.api.nvim_create_user_command('CodevAsk', function(opts)
  codev().ask(opts.args ~= '' and opts.args or nil)
end, { nargs = '*', desc = 'Codev: ask the assistant (opens the chat buffer)' })

vim.api.nvim_create_user_command('CodevTool', function(opts)
  local name, json = opts.args:match('^(%S+)%s*(.*)$')
  codev().run_tool(name, json ~= '' and json or '{}')
end, {
  nargs = '+',
  desc = 'Codev: run a tool, e.g. :CodevTool Read {"file_path": "/abs/path"}',
  complete = function(arglead, cmdline)
    if cmdline:match('^%S+%s+%S*$') then
      return vim.tbl_filter(function(n)
        return vim.startswith(n, arglead)
      end, codev().tool_names())
    end
    return {}
  end,
})

vim.api.nvim_create_user_command('CodevMode', function(opts)
  codev().mode(opts.args ~= '' and opts.args or nil)
end, {
  nargs = '?',
  desc = 'Codev: show or set the permission mode',
  complete = function()
    return { 'default', 'acceptEdits', 'bypassPermissions', 'plan', 'auto' }
  end,
})

vim.api.nvim_create_user_command('CodevExplain', function(opts)
  local name, json = opts.args:match('^(%S+)%s*(.*)$')
  codev().explain(name, json ~= '' and json or '{}')
end, { nargs = '+', desc = 'Codev: explain what would decide a tool use, without running it' })

vim.api.nvim_create_user_command('CodevMcpApprove', function(opts)
  codev().mcp_approve(opts.args ~= '' and opts.args or nil)
end, { nargs = '?', desc = "Codev: be asked again about a project's MCP server (dismissed or rejected)" })

vim.api.nvim_create_user_command('CodevCancel', function()
  codev().cancel()
end, { desc = 'Codev: interrupt the running tool or chat turn' })

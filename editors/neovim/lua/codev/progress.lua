-- Progress of Codev's tool runs (LSP $/progress → LspProgress) in the status line and messages.
local M = {}

local group = vim.api.nvim_create_augroup('codev.progress', { clear = true })

function M.setup(style)
  vim.api.nvim_clear_autocmds({ group = group })
  vim.api.nvim_create_autocmd('LspProgress', {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if not client or client.name ~= 'codev_ls' then
        return
      end
      local state = require('codev').state
      local token = tostring(ev.data.params.token)
      local value = ev.data.params.value or {}
      if value.kind == 'begin' then
        state.running[token] = value.title
      elseif value.kind == 'end' then
        state.running[token] = nil
      end
      if not style then
        return
      end
      local title = state.running[token] or value.title or 'Codev'
      local text = value.kind == 'end' and (title .. ': done') or (title .. (value.message and (': ' .. value.message) or ''))
      if style == 'notify' then
        vim.notify(text, vim.log.levels.INFO, { title = 'Codev' })
      else
        vim.api.nvim_echo({ { text:gsub('\n', ' '):sub(1, vim.o.columns - 12), 'Comment' } }, false, {})
      end
      vim.cmd.redrawstatus()
    end,
  })
end

return M

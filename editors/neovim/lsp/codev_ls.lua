-- Codev LS for Neovim 0.11+: `vim.lsp.enable('codev_ls')` picks this file up from 'runtimepath'.
-- nvim-lspconfig users get the same table (see README): it is plain data plus handlers.
---@type vim.lsp.Config
return {
  cmd = { 'codev-ls' },
  -- Codev works on any file of a project: no filetype filter.
  root_markers = { '.codev', '.git', 'pyproject.toml', 'package.json', 'Cargo.toml', 'go.mod' },
  -- No init_options.permissionMode here: the settings files' defaultMode decides unless setup()
  -- (permission_mode) or the user's config asks for one.
  -- The status line shows the permission mode from the start.
  on_init = function(client)
    require('codev').on_init(client)
  end,
  handlers = {
    ['window/showMessageRequest'] = function(...)
      return require('codev.prompt').show_message_request(...)
    end,
    ['workspace/applyEdit'] = function(...)
      return require('codev.edits').apply_edit(...)
    end,
    ['codev/chatEvent'] = function(...)
      return require('codev.chat').on_event(...)
    end,
  },
}

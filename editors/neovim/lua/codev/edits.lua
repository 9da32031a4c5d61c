-- workspace/applyEdit for the Codev client: apply to buffers as one step, then write them.
--
-- Codev's contract is that an approved edit is on disk when the tool's outcome returns. Neovim's
-- own handler only changes buffers, so after applying, every buffer the edit touched is written —
-- unless it had unsaved changes of the user's before the edit (those are never written behind
-- the user's back; the server saw them and built the edit on top of them).
local M = {}

local function touched_uris(edit)
  local uris = {}
  for uri in pairs(edit.changes or {}) do
    uris[#uris + 1] = uri
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument then
      uris[#uris + 1] = change.textDocument.uri
    elseif change.kind == 'create' then
      uris[#uris + 1] = change.uri
    elseif change.kind == 'rename' then
      uris[#uris + 1] = change.newUri
    end
  end
  return uris
end

function M.apply_edit(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return { applied = false, failureReason = 'no client' }
  end
  local before = {}
  for _, uri in ipairs(touched_uris(params.edit)) do
    local bufnr = vim.uri_to_bufnr(uri)
    before[bufnr] = vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].modified
  end
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, params.edit, client.offset_encoding)
  if not ok then
    return { applied = false, failureReason = tostring(err) }
  end
  for bufnr, was_modified in pairs(before) do
    if vim.api.nvim_buf_is_loaded(bufnr) and not was_modified and vim.bo[bufnr].modified then
      vim.api.nvim_buf_call(bufnr, function()
        vim.cmd('silent noautocmd keepalt write!')
      end)
    end
  end
  return { applied = true }
end

return M

-- Permission prompts in a floating window: the tool, the command or the diff, and one key per answer.
--
-- Codev asks with window/showMessageRequest (PROTOCOL.md): actions titled "Allow once",
-- "Allow for this session: <rule>", "Always allow: <rule>", "Reject". Keys: a = allow once,
-- s = this session, A = always, r = reject, q/<Esc> = dismiss (also a rejection). Other questions
-- (e.g. AskUserQuestion) get number keys. Without a coroutine to wait in, vim.ui.select is used.
local M = {}

local KEYS = {
  { prefix = 'Allow once', key = 'a' },
  { prefix = 'Allow for this session', key = 's' },
  { prefix = 'Always allow', key = 'A' },
  { prefix = 'Reject', key = 'r' },
}

--- Which key answers an action (nil: numbered).
local function key_for(title)
  for _, k in ipairs(KEYS) do
    if vim.startswith(title, k.prefix) then
      return k.key
    end
  end
end

--- The lines and key table of the prompt (kept pure so it can be tested).
function M.layout(params)
  local lines = vim.split(params.message or '', '\n', { plain = true })
  lines[#lines + 1] = ''
  local keys = {}
  for i, action in ipairs(params.actions or {}) do
    local key = key_for(action.title) or tostring(i)
    if keys[key] then
      key = tostring(i)
    end
    keys[key] = action
    lines[#lines + 1] = ('  [%s] %s'):format(key, action.title)
  end
  lines[#lines + 1] = '  [q] dismiss'
  return lines, keys
end

-- The open prompt, for tests and for `answer()`.
M.current = nil

--- Answer the open prompt as if `key` was pressed.
function M.answer(key)
  local cur = M.current
  if not cur then
    return false
  end
  local action = cur.keys[key]
  if key ~= 'q' and key ~= '<Esc>' and not action then
    return false
  end
  M.current = nil
  if vim.api.nvim_win_is_valid(cur.win) then
    vim.api.nvim_win_close(cur.win, true)
  end
  cur.done(action)
  return true
end

local function open_float(params, done)
  local lines, keys = M.layout(params)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  -- Diffs read better highlighted.
  if (params.message or ''):find('\n@@', 1, true) or (params.message or ''):find('\n%-%-%- ') then
    vim.bo[buf].filetype = 'diff'
  end
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width + 2, math.max(20, vim.o.columns - 4))
  local height = math.min(#lines, math.max(3, vim.o.lines - 6))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = height,
    row = math.floor((vim.o.lines - height) / 2),
    col = math.floor((vim.o.columns - width) / 2),
    style = 'minimal',
    border = 'rounded',
    title = ' Codev permission ',
    title_pos = 'center',
  })
  M.current = { win = win, buf = buf, keys = keys, done = done }
  for key in pairs(keys) do
    vim.keymap.set('n', key, function()
      M.answer(key)
    end, { buffer = buf, nowait = true })
  end
  for _, key in ipairs({ 'q', '<Esc>' }) do
    vim.keymap.set('n', key, function()
      M.answer('q')
    end, { buffer = buf, nowait = true })
  end
  -- Leaving the window without answering is a dismissal (= rejection).
  vim.api.nvim_create_autocmd('WinLeave', {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        if M.current and M.current.buf == buf then
          M.answer('q')
        end
      end)
    end,
  })
end

--- The window/showMessageRequest handler of the Codev client.
function M.show_message_request(_, params)
  local co, is_main = coroutine.running()
  if not co or is_main then
    local actions = params.actions or {}
    local choice
    vim.ui.select(actions, {
      prompt = params.message,
      format_item = function(a)
        return a.title
      end,
    }, function(c)
      choice = c
    end)
    return choice or vim.NIL
  end
  open_float(params, function(action)
    vim.schedule(function()
      coroutine.resume(co, action or vim.NIL)
    end)
  end)
  return coroutine.yield()
end

return M

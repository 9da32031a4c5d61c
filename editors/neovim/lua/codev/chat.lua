-- The chat buffer: a scratch Markdown buffer streaming codev/chatEvent; <C-c> cancels the turn.
local M = {}

M.buf = nil
M.session_id = nil
M.busy = false
-- This turn: did text stream in, did it end (a done event)? The codev/chat answer fills the gaps.
local turn = { streamed = false, ended = true }

local function valid(buf)
  return buf and vim.api.nvim_buf_is_valid(buf)
end

--- The chat buffer, created (and shown in a split) when needed.
function M.open()
  if not valid(M.buf) then
    M.buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(M.buf, 'codev://chat')
    vim.bo[M.buf].filetype = 'markdown'
    vim.bo[M.buf].bufhidden = 'hide'
    vim.bo[M.buf].swapfile = false
    vim.keymap.set({ 'n', 'i' }, '<C-c>', function()
      M.cancel()
    end, { buffer = M.buf, desc = 'Codev: stop the running turn' })
    vim.keymap.set('n', 'i', function()
      require('codev').ask()
    end, { buffer = M.buf, desc = 'Codev: ask' })
  end
  if vim.fn.bufwinid(M.buf) == -1 then
    vim.cmd('botright vsplit')
    vim.api.nvim_win_set_buf(0, M.buf)
    vim.wo.wrap = true
    vim.wo.linebreak = true
  end
  return M.buf
end

--- Append text to the chat buffer; `newline` starts a new line first.
function M.append(text, newline)
  local buf = M.open()
  vim.bo[buf].modifiable = true
  local lines = vim.split(text, '\n', { plain = true })
  local last = vim.api.nvim_buf_line_count(buf)
  if newline then
    vim.api.nvim_buf_set_lines(buf, last, last, false, lines)
  else
    local tail = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ''
    lines[1] = tail .. lines[1]
    vim.api.nvim_buf_set_lines(buf, last - 1, last, false, lines)
  end
  vim.bo[buf].modifiable = false
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  end
end

local function short(value, limit)
  local text = type(value) == 'string' and value or vim.json.encode(value)
  text = text:gsub('\n', ' ')
  if #text > limit then
    text = text:sub(1, limit) .. '…'
  end
  return text
end

--- codev/chatEvent: {sessionId, type = text|toolUse|toolResult|done, ...}
function M.on_event(_, params)
  if not params then
    return
  end
  if params.sessionId then
    M.session_id = params.sessionId
  end
  if params.type == 'text' then
    turn.streamed = true
    M.append(params.delta or '')
  elseif params.type == 'toolUse' then
    M.append(('▶ %s %s'):format(params.name or '?', short(params.input or {}, 120)), true)
  elseif params.type == 'toolResult' then
    local o = params.outcome or params
    local mark = o.status == 'success' and '✓' or '✗'
    local content = o.content
    if type(content) == 'table' then
      content = '[' .. #content .. ' blocks]'
    end
    M.append(('%s %s %s'):format(mark, o.status or '?', short(content or '', 160)), true)
    M.append('', true)
  elseif params.type == 'done' then
    M.finish(params.stopReason)
  end
end

--- End the turn once: the closing line, and not busy any more.
function M.finish(stop_reason)
  M.busy = false
  if turn.ended then
    return
  end
  turn.ended = true
  M.append(('— %s'):format(stop_reason or 'done'), true)
end

--- Send a prompt in the current chat session.
function M.send(prompt)
  M.open()
  M.append('## You', true)
  M.append(prompt, true)
  M.append('', true)
  M.append('## Codev', true)
  M.append('', true)
  M.busy = true
  turn = { streamed = false, ended = false }
  local this_turn = turn
  local params = { prompt = prompt }
  if M.session_id then
    params.sessionId = M.session_id
  end
  local id = require('codev').request('codev/chat', params, function(result)
    if turn ~= this_turn then
      return
    end
    if result and result.sessionId then
      M.session_id = result.sessionId
    end
    -- No text event arrived (e.g. a client without the codev/chatEvent handler): show the answer.
    if result and not turn.streamed and type(result.text) == 'string' and result.text ~= '' then
      turn.streamed = true
      M.append(result.text)
    end
    M.finish(result and result.stopReason)
  end, function(err)
    if turn ~= this_turn then
      return
    end
    M.append('', true)
    M.append('**Error:** ' .. (err.message or vim.inspect(err)), true)
    M.finish('error')
  end)
  if not id then
    M.finish('error')
  end
end

function M.cancel()
  local params = M.session_id and { sessionId = M.session_id } or vim.empty_dict()
  require('codev').request('codev/cancel', params, function() end)
end

return M

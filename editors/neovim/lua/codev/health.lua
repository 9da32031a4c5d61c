-- :checkhealth codev — is everything Codev needs in place?
local M = {}

local function run(cmd)
  local ok, res = pcall(function()
    return vim.system(cmd, { text = true }):wait(5000)
  end)
  if ok and res and res.code == 0 then
    return vim.trim(res.stdout or '')
  end
end

--- The Python that runs the server: the command itself (`python -m codev_ls`), or the interpreter
--- named in the `codev-ls` script's shebang (pip writes the venv's python there). Nil when unknown.
function M.server_python(cmd)
  local exe = vim.fn.exepath(cmd[1] or '')
  if exe == '' then
    return nil
  end
  if vim.fs.basename(exe):match('^python') then
    return exe
  end
  local f = io.open(exe, 'rb')
  local first = f and f:read(256) or ''
  if f then
    f:close()
  end
  first = first:match('^[^\n]*') or ''
  local interp, arg = first:match('^#!%s*(%S+)%s*(%S*)')
  if not interp then
    return nil
  end
  if vim.fs.basename(interp) == 'env' and arg ~= '' then
    local found = vim.fn.exepath(arg)
    return found ~= '' and found or nil
  end
  return interp
end

function M.check()
  local health = vim.health
  health.start('Codev LS server')
  local cfg = require('codev').lsp_config()
  local cmd = cfg.cmd or { 'codev-ls' }
  if type(cmd) ~= 'table' or vim.fn.executable(cmd[1]) == 0 then
    health.error(('server command not found: %s'):format(vim.inspect(cmd)), {
      'pip install codev-ls (or `pip install -e .` in a checkout), then make sure `codev-ls` is on PATH',
      "or set require('codev').setup({ cmd = { '/path/to/venv/bin/codev-ls' } })",
    })
  else
    local version = run(vim.list_extend(vim.deepcopy(cmd), { '--version' }))
    if version then
      health.ok(('server: %s (%s)'):format(version, table.concat(cmd, ' ')))
    else
      health.warn(('`%s --version` failed'):format(table.concat(cmd, ' ')))
    end
  end
  local client = require('codev').get_client()
  if client then
    health.ok(('attached: client %d, root %s'):format(client.id, client.root_dir or '?'))
  else
    health.info('no Codev client running yet (it starts when you open a file of a project)')
  end

  health.start('Tools the server uses')
  local python = type(cmd) == 'table' and M.server_python(cmd) or nil
  local version = python and run({ python, '-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])' })
  if version then
    local major, minor = version:match('^(%d+)%.(%d+)')
    if tonumber(major) > 3 or (tonumber(major) == 3 and tonumber(minor) >= 11) then
      health.ok(("Python %s (%s): the server's interpreter"):format(version, python))
    else
      health.error(('Python %s (%s) runs the server: it needs Python ≥ 3.11'):format(version, python))
    end
  elseif python then
    health.warn(("the server's Python (%s) does not run"):format(python))
  else
    health.info('could not tell which Python runs the server (its command is not a Python script)')
  end
  if vim.fn.executable('bwrap') == 1 then
    health.ok('bubblewrap (bwrap): Bash commands run sandboxed')
  else
    health.warn('bubblewrap (bwrap) not found: every Bash command will ask first', { 'apt-get install bubblewrap' })
  end
  local beside = python and vim.fs.joinpath(vim.fs.dirname(python), 'rg')
  if beside and vim.fn.executable(beside) == 1 then
    health.ok(('ripgrep (rg) beside the server: %s'):format(beside))
  elseif vim.fn.executable('rg') == 1 then
    health.ok('ripgrep (rg) on PATH')
  else
    health.warn('ripgrep (rg) not found: Grep and Glob need it', { "pip install 'ripgrep==14.1.0' in the server's environment" })
  end

  health.start('Model provider (for :CodevAsk)')
  local env = vim.env
  if env.CODEV_PROVIDER == 'openai' then
    if env.OPENAI_API_KEY or env.OPENAI_BASE_URL then
      health.ok(('OpenAI-compatible provider%s'):format(env.OPENAI_BASE_URL and (' at ' .. env.OPENAI_BASE_URL) or ''))
    else
      health.warn('CODEV_PROVIDER=openai but OPENAI_API_KEY is not set')
    end
  elseif env.ANTHROPIC_API_KEY then
    health.ok('Anthropic (ANTHROPIC_API_KEY is set)')
  else
    health.warn('no model provider configured: tools work, chat does not', {
      'export ANTHROPIC_API_KEY=...  (Anthropic)',
      'or CODEV_PROVIDER=openai OPENAI_API_KEY=... [OPENAI_BASE_URL=...] (OpenAI-compatible, e.g. Ollama)',
    })
  end
end

return M

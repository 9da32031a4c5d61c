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
  local python = run({ 'python3', '--version' })
  if python then
    health.ok(python)
  else
    health.warn('python3 not found on PATH (the server needs Python ≥ 3.11)')
  end
  if vim.fn.executable('bwrap') == 1 then
    health.ok('bubblewrap (bwrap): Bash commands run sandboxed')
  else
    health.warn('bubblewrap (bwrap) not found: every Bash command will ask first', { 'apt-get install bubblewrap' })
  end
  if vim.fn.executable('rg') == 1 then
    health.ok('ripgrep (rg) on PATH')
  else
    health.info('rg not on PATH: the server uses the ripgrep wheel installed beside it')
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

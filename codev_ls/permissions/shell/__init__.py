"""Shell commands, parsed with a real parser (tree-sitter-bash), never pattern-matched.

Permission rules for Bash are judged per *simple command*: ``a && b | c`` is
three commands, and a rule allows the whole only if it allows each one. This
module turns a command string into those simple commands — through every
compound form (``&&``, ``||``, ``;``, ``|``, ``&``, newlines, subshells,
groups, ``if``/``for``/``while``/``case`` bodies, ``$(...)``, backticks,
process substitution, unquoted heredoc bodies) — with their words after quote
removal, their env prefixes and their redirections.

It also *looks through* commands that run other commands: ``bash -c``/``sh -c``
(the script is parsed in turn), ``eval``, ``xargs``, ``env``, ``nohup``,
``timeout``, ``nice``, ``time``, ``command``, ``exec``, ``stdbuf``,
``sudo``/``doas``, ``watch``, and the commands ``find -exec`` runs. The
command a wrapper runs is what rules see; the wrapper is kept in
:attr:`SimpleCommand.layers` so that a rule naming it still matches.

Whatever the parser cannot fully account for — a syntax error, a node type this
module does not know, a command name only known at run time (``$CMD``), a shell
reading its script from stdin, a function definition that can redefine later
commands, arithmetic over variables (which can run code) — sets
``fully_understood = False`` with a reason. The permission system never
auto-allows such a command; deny and ask rules still see every simple command
that *was* found.

The API the Bash tool and the permission system use:

- :func:`write_targets` — the files a command writes by its arguments (``cp a B``)

- :func:`parse_command` → :class:`ParsedCommand`
- :func:`is_read_only_command` — the built-in read-only set, whole parse clean
- :func:`classify_command` — ``"search"`` / ``"read"`` / ``"list"`` for folding
- :func:`match_rule` — does a ``Bash(...)`` specifier match one simple command
"""

from codev_ls.permissions.shell.parse import (
    ESCALATING_WRAPPERS,
    HARMLESS_WRITE_TARGETS,
    ParsedCommand,
    Redirect,
    SimpleCommand,
    git_global_options,
    is_safe_env_name,
    name_set,
    parse_command,
    quote_word,
)
from codev_ls.permissions.shell.readonly import (
    ARGS_NOT_PATHS,
    PathArgument,
    RecursiveRead,
    classify_command,
    command_problem,
    follows_links,
    is_read_only_command,
    listed_link_filter,
    lists_workspace_paths,
    path_arguments,
    read_only_problem,
    recursive_read,
)
from codev_ls.permissions.shell.rules import (
    CommandPattern,
    command_pattern,
    compound_allowed,
    match_rule,
)
from codev_ls.permissions.shell.writes import (
    KNOWN_WRITERS,
    WriteTarget,
    is_known_writer,
    write_targets,
)

__all__ = [
    "ARGS_NOT_PATHS",
    "ESCALATING_WRAPPERS",
    "HARMLESS_WRITE_TARGETS",
    "KNOWN_WRITERS",
    "CommandPattern",
    "ParsedCommand",
    "PathArgument",
    "RecursiveRead",
    "Redirect",
    "SimpleCommand",
    "WriteTarget",
    "classify_command",
    "command_pattern",
    "command_problem",
    "compound_allowed",
    "follows_links",
    "git_global_options",
    "is_known_writer",
    "is_read_only_command",
    "is_safe_env_name",
    "listed_link_filter",
    "lists_workspace_paths",
    "match_rule",
    "name_set",
    "parse_command",
    "path_arguments",
    "quote_word",
    "read_only_problem",
    "recursive_read",
    "write_targets",
]

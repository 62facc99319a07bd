"""The REPL command registry: registration refuses commands the help and
completion could not describe; every shipped command passes."""
import pytest

from argus.cli.repl import registry
from argus.cli.repl import commands  # noqa: F401  (registers them)
from argus.cli.repl.registry import CommandParser, ReplUsageError, command

REQUIRED = {"vertex", "path", "stack", "events", "threads", "follow", "back", "not-causal", "flag", "baseline",
            "diagnose", "export", "quit", "help", "profile", "compare"}


def test_every_required_command_is_registered_with_help():
    assert REQUIRED <= set(registry.COMMANDS)
    for name, cmd in registry.COMMANDS.items():
        assert cmd.summary and cmd.parser.format_help().startswith(f"usage: {name}")


def test_completion_tree_comes_from_the_registry():
    tree = registry.completion_tree()
    assert REQUIRED <= set(tree)
    assert "--answers" in tree["export"] and set(tree["export"]["--format"]) == {"json", "text"}
    assert set(tree["help"]) == set(registry.COMMANDS)
    assert tree["f"] == tree["follow"]                     # aliases complete like their command


def test_registration_checks_help_and_types():
    p = CommandParser("nodesc", "")
    with pytest.raises(ValueError, match="no description"):
        command(p)(lambda ctx, args: None)
    p = CommandParser("nohelp", "A command.")
    p.add_argument("x", type=int)
    with pytest.raises(ValueError, match="no help text"):
        command(p)(lambda ctx, args: None)
    p = CommandParser("notype", "A command.")
    p.add_argument("--x", help="an untyped value")
    with pytest.raises(ValueError, match="no type"):
        command(p)(lambda ctx, args: None)
    assert "nodesc" not in registry.COMMANDS and "notype" not in registry.COMMANDS


def test_parsing_never_exits():
    cmd = registry.lookup("follow")
    with pytest.raises(ReplUsageError, match="invalid int value"):
        cmd.parser.parse_args(["xx"])
    with pytest.raises(ReplUsageError):
        registry.lookup("export").parser.parse_args([])
    assert registry.lookup("q") is registry.lookup("quit")

"""The YAML of a configuration file, parsed strictly and within bounds.

Kept apart from :mod:`gate.config` so that PyYAML is imported only when a configuration file
is read (see :func:`gate.config.read_config_file`).
"""

from __future__ import annotations

from typing import Any

import yaml

from gate import limits
from gate.errors import ConfigError, shorten


def parse_config_yaml(text: str, path: str) -> Any:
    """The value of the YAML document ``text`` (read from ``path``): its shape bounded first
    (:func:`_check_shape`), a key given twice refused; :class:`ConfigError` naming the line."""
    try:
        _check_shape(text, path)
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError(f"{where}: not valid YAML: {shorten(problem)}") from None
    except (ValueError, OverflowError) as error:  # an integer of 5,000 digits, for one
        raise ConfigError(f"{path}: not valid YAML: {shorten(str(error))}") from None


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML loader that refuses a key given twice in one mapping (YAML says last wins)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        try:
            again = key in seen
        except TypeError:  # a list or a mapping as a key
            raise yaml.constructor.ConstructorError(
                None, None, f"a {type(key).__name__} as a mapping key", key_node.start_mark
            ) from None
        if again:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _check_shape(text: str, path: str) -> None:
    """Refuse a document nested too deep or too big once its aliases are expanded, from the
    parser's events (no recursion), before any node of it is built.

    Aliases are where a YAML file of a few hundred bytes becomes billions of values ("billion
    laughs"): each alias counts as the whole node it repeats.
    """
    depth_limit = limits.CONFIG_DEPTH.value()
    node_limit = limits.CONFIG_NODES.value()
    sizes: dict[str, int] = {}  # anchor → nodes it stands for
    open_nodes: list[tuple[str | None, int]] = []  # collections being read: anchor, count before
    total = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        mark = getattr(event, "start_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes:
                raise ConfigError(f"{where}: alias *{event.anchor} inside its own anchor")
            total += sizes[event.anchor]
        elif isinstance(event, yaml.ScalarEvent):
            total += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            total += 1
            open_nodes.append((event.anchor, total - 1))
            if len(open_nodes) > depth_limit:
                raise ConfigError(
                    f"{where}: mappings and lists nest more than {depth_limit} levels deep"
                )
        elif isinstance(event, yaml.CollectionEndEvent) and open_nodes:
            anchor, before = open_nodes.pop()
            if anchor:
                sizes[anchor] = total - before
        if total > node_limit:
            raise ConfigError(
                f"{where}: the configuration holds more than {node_limit:,} values once its "
                "aliases are expanded"
            )

"""Browser steps wait for what they use: no browser test looks an element up bare.

A page draws its parts one after another, so an element looked up once, right after waiting on something else,
is sometimes not drawn yet (``NoSuchElementException``: the Review test once looked up the reason box straight
after waiting for the slider).  Every step that acts on an element finds it through ``element``, ``press`` or
``type_into`` (``tests/dashboard/test_browser.py``), which wait until it is there and usable.  This reads the
sources of every module that drives a browser and refuses a lookup that fails when the element is not drawn
yet: ``driver.find_element(...)`` (or ``browser.…``), and the first of ``driver.find_elements(...)`` taken
without waiting (indexed, or ``next`` without a default).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVERS = frozenset({"driver", "browser"})


def _on_driver(node: ast.AST, method: str) -> bool:
    """``node`` is a call of ``driver.<method>(...)`` or ``browser.<method>(...)``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in DRIVERS
    )


def _iterates_lookup(node: ast.AST) -> bool:
    """A generator or iterator over ``driver.find_elements(...)`` (``e for e in driver.find_elements(…)``,
    ``iter(…)``, ``reversed(…)``)."""
    if isinstance(node, ast.GeneratorExp):
        return any(_on_driver(generator.iter, "find_elements") for generator in node.generators)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("iter", "reversed"):
        return bool(node.args) and _on_driver(node.args[0], "find_elements")
    return False


def bare_lookups(source: str, filename: str = "<source>") -> list[str]:
    """Every lookup in ``source`` that fails when the element is not drawn yet, as ``file:line: what``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename)):
        one = _on_driver(node, "find_element")  # raises while the element is not drawn
        first = isinstance(node, ast.Subscript) and _on_driver(node.value, "find_elements")  # IndexError then
        following = (  # StopIteration then
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "next"
            and len(node.args) == 1
            and _iterates_lookup(node.args[0])
        )
        if one or first or following:
            found.append((node.lineno, f"{filename}:{node.lineno}: {ast.unparse(node)}"))
    return [line for _, line in sorted(found)]


def browser_sources() -> list[Path]:
    """The modules that drive a browser: the tests' and the benchmarks' that use selenium."""
    candidates = [*sorted((ROOT / "tests").rglob("*.py")), *sorted((ROOT / "bench").glob("*.py"))]
    here = Path(__file__).resolve()
    return [path for path in candidates if path.resolve() != here and "selenium" in path.read_text(encoding="utf-8")]


def test_no_browser_step_looks_an_element_up_bare():
    sources = browser_sources()
    assert any(path.name == "test_browser.py" for path in sources)  # the check reads the browser tests
    bare = [line for path in sources for line in bare_lookups(path.read_text(encoding="utf-8"), str(path))]
    advice = "look elements up with element(), press() or type_into() (tests/dashboard/test_browser.py)"
    assert bare == [], advice + ":\n" + "\n".join(bare)


def test_the_check_catches_each_kind_of_bare_lookup():
    snippet = """
def test_review(browser):
    wait_for(lambda: slider() == "20.7", 45, "the slider")
    browser.find_element(By.CSS_SELECTOR, ".st-key-reason-data_quality input").send_keys("It is about right")
    first = driver.find_elements(By.CSS_SELECTOR, "button")[0]
    search = next(e for e in browser.find_elements(By.CSS_SELECTOR, "input") if e.text == "x")
    last = next(reversed(driver.find_elements(By.CSS_SELECTOR, "p")))
"""
    found = bare_lookups(snippet, "snippet.py")
    assert [line.split(":")[1] for line in found] == ["4", "5", "6", "7"], found
    assert "find_element(By.CSS_SELECTOR, '.st-key-reason-data_quality input')" in found[0]


def test_the_check_lets_waiting_lookups_and_element_lookups_through():
    snippet = """
def steps(browser, button):
    press(browser, lambda: next(iter(browser.find_elements(By.XPATH, "//button")), None), "the button")
    element(browser, lambda: next(reversed(browser.find_elements(By.CSS_SELECTOR, "p")), None), "the last line")
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "textarea"), 20, "the answer box")
    label = button.find_element(By.CSS_SELECTOR, "p").text  # inside an element found by waiting
"""
    assert bare_lookups(snippet) == []

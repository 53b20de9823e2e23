"""The search page of `code-alias serve`, used in a real headless browser (Debian's chromium, through Selenium).

A hybrid index of the views fixture (`tests/support/views_repo.py`: class outlines, five near-identical methods, tests)
behind a token. The browser checks what a person sees: results first and above the fold at 1400x900 and 400x800,
every code line at the file's own line number (outlines and "show more" included), the question in the URL (Back
returns to the previous answer), one request however often Enter is pressed while the answer is on its way (the
previous answer dimmed meanwhile), an error that replaces the answer and says what to do, completions with their
kinds (public names before constants, private names and tests; the typed part in bold) where choosing one asks
about that symbol, editor links that follow the person's settings, dark mode, and "no confident match".

Screenshots go to the test's folder, or to `docs/` with `CODE_ALIAS_PAGE_SCREENSHOTS=docs`. Without chromium,
chromedriver or Selenium the browser tests skip, saying which.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest

from tests.support.servers import ThreadServer
from tests.support.views_repo import views_copy

pytest.importorskip("hayhooks")
import httpx  # a dependency of hayhooks

from tests.support.repos import ROOT

TOKEN = "page-token-5e0a"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or shutil.which("chromium-driver")
WIDE, NARROW = (1400, 900), (400, 800)
NONSENSE = "what's the weather on mars?"


def _build(tmp_path_factory: pytest.TempPathFactory, name: str) -> tuple[Path, Path]:
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    index_dir = tmp_path_factory.mktemp(f"{name}-index")
    repo = views_copy(tmp_path_factory.mktemp(f"{name}-repo") / "acme")
    CodeSearch(index_dir).index(repo)  # hybrid: a question sharing no word with the code still has closest places
    return index_dir, repo


def _serve(index_dir: Path, repo: Path, **settings: Any) -> ThreadServer:
    from haystack_integrations.components.code_alias.serving.server import ServerSettings, build_app
    from haystack_integrations.components.code_alias.serving.service import ServiceSettings

    app = build_app(ServerSettings(token=TOKEN), ServiceSettings(index_dir=index_dir, **settings))
    served = ThreadServer(app).start()
    served.repo = repo
    return served


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _build(tmp_path_factory, "page")


@pytest.fixture(scope="module")
def server(built: tuple[Path, Path]) -> Iterator[ThreadServer]:
    served = _serve(*built)
    yield served
    served.stop()


AUTH = {"authorization": f"Bearer {TOKEN}"}


def test_the_page_loads_without_the_token_and_its_data_needs_it(server: ThreadServer) -> None:
    page = httpx.get(server.url + "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "connect-src 'self'" in policy
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page.text)  # nothing from another origin
    assert httpx.get(server.url + "/page/page.js").status_code == 200
    assert httpx.get(server.url + "/page/favicon.svg").headers["content-type"].startswith("image/svg+xml")
    assert httpx.get(server.url + "/page/../server.py").status_code in (401, 404)
    assert httpx.get(server.url + "/page/info").status_code == 401
    assert httpx.post(server.url + "/page/ask", json={"question": "retry"}).status_code == 401
    info = httpx.get(server.url + "/page/info", headers=AUTH).json()
    assert "@acme/payments-core" in info["packages"] and info["repositories"] == ["acme"]
    assert info["links"]["default"] == "vscode://file{abs}:{line}" and info["roots"][""] == str(server.repo)


def test_page_ask_gives_code_at_the_files_lines_why_and_the_editor_path(server: ThreadServer) -> None:
    answer = httpx.post(server.url + "/page/ask", headers=AUTH, json={"question": "where's the payments retry helper?"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    first = body["symbols"][0]
    assert first["display_name"] == "withStripeBackoff" and first["start_line"] == 6
    number, text, marks = first["code"]["lines"][first["code"]["window"][0] + 3]
    assert (number, text) == (
        6,
        "export async function withStripeBackoff<T>(call: () => Promise<T>, attempts = 5): Promise<T> {",
    )
    assert [text[marks[0][0] : marks[0][1]], marks[0][2]] == ["withStripeBackoff", "symbol"]
    assert first["editor_path"] == str(server.repo.resolve() / "packages/payments-core/src/retry.ts")
    assert "keyword search" in first["reason"] and "bm25 #" not in first["reason"]
    assert body["abstained"] is False and body["groups"][0] == [0]


def test_a_team_server_may_send_links_to_its_forge(built: tuple[Path, Path]) -> None:
    template = "https://git.example/acme/pay/blob/main/{path}#L{line}"
    served = _serve(*built, link_template=template)
    try:
        info = httpx.get(served.url + "/page/info", headers=AUTH).json()
        assert info["links"]["default"] == template
    finally:
        served.stop()


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"{", 400),
        (b'"question"', 400),
        (b'{"question": 5}', 422),
        (b'{"question": "retry", "top_k": "3"}', 422),
        (b'{"question": "retry", "top_k": 0}', 422),
        (b'{"question": "retry", "repo": ["a"]}', 422),
        (b'{"question": "retry", "mode": "llm"}', 422),
        (b'{"top_k": 3}', 422),
    ],
)
def test_bad_page_questions_are_a_4xx(server: ThreadServer, body: bytes, status: int) -> None:
    headers = {**AUTH, "content-type": "application/json"}
    answer = httpx.post(server.url + "/page/ask", headers=headers, content=body)
    assert answer.status_code == status, answer.text
    assert isinstance(answer.json()["detail"], str) and "Traceback" not in answer.text


# ---- the browser ----------------------------------------------------------------------------------------------
def _skip_reason() -> str | None:
    if CHROMIUM is None or CHROMEDRIVER is None:
        return "no chromium/chromedriver here (Debian: apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (the dev extra)"
    return None


@pytest.fixture
def browser() -> Iterator[Any]:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    _viewport(driver, *WIDE)
    try:
        yield driver
    finally:
        driver.quit()


def _viewport(driver: Any, width: int, height: int) -> None:
    """The page's own viewport (what a person's window shows), whatever the headless window's frame."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )


def _screenshots(tmp_path: Path) -> Path:
    return ROOT / "docs" if os.environ.get("CODE_ALIAS_PAGE_SCREENSHOTS") == "docs" else tmp_path


def _wait(driver: Any, condition: Any, seconds: float = 60) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(condition)


def _answered(driver: Any) -> bool:
    return bool(
        driver.execute_script(
            "const a = document.getElementById('answer'), e = document.getElementById('error');"
            "return (!a.hidden && !a.classList.contains('stale')) || !e.hidden;"
        )
    )


def _open(driver: Any, server: ThreadServer, question: str | None = None) -> None:
    driver.get(server.url + (f"/?q={quote(question)}" if question else "/") + f"#token={TOKEN}")
    if question:
        _wait(driver, _answered)


def _ask(driver: Any, question: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = driver.find_element(By.ID, "q")
    box.clear()
    box.send_keys(question, Keys.ESCAPE, Keys.ENTER)
    _wait(driver, lambda d: d.execute_script("return !document.getElementById('answer').classList.contains('stale')"))
    _wait(driver, _answered)


def _shown_lines(driver: Any) -> list[tuple[str, int, str]]:
    """(file, line number, text) of every code line visible on the page."""
    rows = driver.execute_script(
        "return Array.from(document.querySelectorAll('#symbols .symbol')).flatMap(s => {"
        "  const where = s.querySelector('.head .open').textContent;"
        "  return Array.from(s.querySelectorAll('pre.code .line[data-line]')).filter(l => l.offsetParent !== null)"
        "    .map(l => [where.slice(0, where.lastIndexOf(':')), Number(l.dataset.line),"
        "               l.querySelector('.text').textContent]);"
        "});"
    )
    return [(str(path), int(number), str(text)) for path, number, text in rows]


def _first_result_fits(driver: Any) -> bool:
    return bool(
        driver.execute_script(
            "const s = document.querySelector('#symbols .symbol');"
            "const line = s.querySelector('pre.code .line[data-line]');"
            "return s.querySelector('.head').getBoundingClientRect().bottom <= innerHeight"
            "  && line.getBoundingClientRect().bottom <= innerHeight;"
        )
    )


def test_results_come_first_at_the_files_own_line_numbers(server: ThreadServer, browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    shots = _screenshots(tmp_path)
    _open(browser, server, "validated fields")
    assert "token" not in browser.current_url  # taken out of the address bar
    assert _first_result_fits(browser)  # at 1400x900: the first result and its code without scrolling
    # The six `_validated` of fields.py are one place, with the others folded under it.
    folded = browser.find_element(By.CSS_SELECTOR, "#symbols .symbol .folded summary").text
    assert folded == "+5 more in fields.py"
    assert not browser.find_element(By.ID, "rewrite").is_displayed()  # the rewrite: a collapsed row of chips
    assert [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#rewrite-chips code")][:1] == ["_validated"]
    browser.save_screenshot(str(shots / "page-wide.png"))

    def check_lines() -> int:
        shown = _shown_lines(browser)
        for path, number, text in shown:
            file = (server.repo / path).read_text(encoding="utf-8").splitlines()
            assert file[number - 1] == (text if text != " " else ""), (path, number)
        return len(shown)

    before = check_lines()
    outline = next(
        s
        for s in browser.find_elements(By.CSS_SELECTOR, "#symbols .symbol")
        if s.find_element(By.CSS_SELECTOR, ".qualified").text == "Field"
    )
    numbers = [
        int(n)
        for n in browser.execute_script(
            "return Array.from(arguments[0].querySelectorAll('.line[data-line]')).map(l => l.dataset.line)", outline
        )
    ]
    assert numbers[:4] == [9, 10, 11, 12] and 17 in numbers and numbers[numbers.index(12) + 1] == 16  # jumps, said
    assert outline.find_element(By.CSS_SELECTOR, ".elision").text.endswith("3 lines not shown")
    # The docstring is a string, all of it: its "class" is not coloured as the keyword (the one on line 9 is).
    docstring = outline.find_element(By.CSS_SELECTOR, ".line[data-line='10']")
    assert "class" in docstring.text and not docstring.find_elements(By.CSS_SELECTOR, ".tok-keyword")
    assert docstring.find_elements(By.CSS_SELECTOR, ".tok-string")
    keywords = outline.find_elements(By.CSS_SELECTOR, ".line[data-line='9'] .tok-keyword")
    assert [k.text for k in keywords] == ["class"]
    for more in browser.find_elements(By.CSS_SELECTOR, "#symbols button.more"):
        more.click()
    assert check_lines() > before  # "show more" shows more lines, at their numbers too

    _viewport(browser, *NARROW)
    browser.execute_script("window.scrollTo(0, 0)")
    assert _first_result_fits(browser)  # at 400x800 too
    wide = browser.execute_script("return document.documentElement.scrollWidth > window.innerWidth + 1")
    assert not wide  # one column, nothing wider than the window (code scrolls inside its block)
    for more in browser.find_elements(By.CSS_SELECTOR, "#symbols button.more[aria-expanded='true']"):
        more.click()
    browser.save_screenshot(str(shots / "page-narrow.png"))


def test_the_question_is_in_the_url_and_back_returns_to_its_answer(server: ThreadServer, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, server, "where's the payments retry helper?")
    assert browser.find_element(By.ID, "q").get_attribute("value") == "where's the payments retry helper?"
    assert browser.title == "where's the payments retry helper? \u2014 code-alias"
    first = browser.find_element(By.CSS_SELECTOR, "#symbols .symbol .qualified").text
    assert first == "withStripeBackoff"
    _ask(browser, "where do we validate the email field")
    assert unquote(browser.current_url.split("?q=", 1)[1]).replace("+", " ") == "where do we validate the email field"
    assert browser.find_element(By.CSS_SELECTOR, "#symbols .symbol .qualified").text != first
    browser.back()
    _wait(browser, lambda d: d.find_element(By.ID, "q").get_attribute("value") == "where's the payments retry helper?")
    _wait(browser, _answered)
    assert browser.find_element(By.CSS_SELECTOR, "#symbols .symbol .qualified").text == first
    assert "retry" in browser.title


def test_enter_while_asking_sends_one_request_and_dims_the_previous_answer(server: ThreadServer, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    _open(browser, server, "validated fields")
    # The answer takes half a second to come back: long enough to press Enter four more times meanwhile.
    browser.execute_script(
        "window.asks = 0; const real = window.fetch;"
        "window.fetch = (url, init) => String(url).includes('/page/ask')"
        "  ? (window.asks++, new Promise(done => setTimeout(done, 500)).then(() => real(url, init)))"
        "  : real(url, init);"
    )
    box = browser.find_element(By.ID, "q")
    box.clear()
    box.send_keys("where is the email field", Keys.ESCAPE)
    for _ in range(5):
        box.send_keys(Keys.ENTER)
    answer = browser.find_element(By.ID, "answer")
    assert "stale" in answer.get_attribute("class") and answer.get_attribute("aria-busy") == "true"
    assert float(answer.value_of_css_property("opacity")) < 0.75 or "stale" in answer.get_attribute("class")
    _wait(browser, _answered)
    assert browser.execute_script("return window.asks") == 1


def test_completions_have_kinds_public_names_first_and_choosing_one_asks_about_it(
    server: ThreadServer, browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ready

    _open(browser, server)
    box = _wait(browser, ready.element_to_be_clickable((By.ID, "q")))
    assert browser.switch_to.active_element == box  # focused on load: keyboard first
    box.send_keys("valid")
    _wait(browser, ready.visibility_of_element_located((By.CSS_SELECTOR, "#completions .option")))
    options = browser.find_elements(By.CSS_SELECTOR, "#completions .option")
    shown = [(o.get_attribute("data-name"), o.find_element(By.CSS_SELECTOR, ".kind").text) for o in options]
    names = [name for name, _ in shown]
    assert shown[0] == ("validate_form", "function"), shown
    assert ("VALIDATION_MESSAGES", "constant") in shown and ("_validated", "method") in shown
    test = "test_validate_form_collects_the_errors"
    order = [names.index(n) for n in ("validate_form", "VALIDATION_MESSAGES", "_validated", test)]
    assert order == sorted(order), names  # public, then constants, private names and tests
    assert options[0].find_element(By.CSS_SELECTOR, ".name b").text.lower() == "valid"  # the typed part in bold
    assert "fields.py:" in options[0].find_element(By.CSS_SELECTOR, ".where").text
    browser.save_screenshot(str(_screenshots(tmp_path) / "page-completions.png"))
    box.send_keys(Keys.ARROW_DOWN)
    assert box.get_attribute("aria-activedescendant") == "completion-0"
    box.send_keys(Keys.ENTER)
    _wait(browser, _answered)
    assert box.get_attribute("value") == "validate_form"  # the question is the symbol, not a spliced sentence
    assert browser.find_element(By.CSS_SELECTOR, "#symbols .symbol .qualified").text == "validate_form"


def test_editor_links_follow_the_persons_settings_and_the_files_are_linked(server: ThreadServer, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _open(browser, server, "where's the payments retry helper?")
    link = browser.find_element(By.CSS_SELECTOR, "#symbols .symbol .head a.open")
    path, _, line = unquote(link.get_attribute("href")[len("vscode://file") :]).rpartition(":")
    assert (
        Path(path)
        .read_text(encoding="utf-8")
        .splitlines()[int(line) - 1]
        .startswith("export async function withStripe")
    )
    files = browser.find_elements(By.CSS_SELECTOR, "#files a.open")
    assert files and files[0].get_attribute("href").startswith("vscode://file/")
    browser.find_element(By.CSS_SELECTOR, "#settings summary").click()
    Select(browser.find_element(By.ID, "link-kind")).select_by_value("jetbrains")
    href = browser.find_element(By.CSS_SELECTOR, "#symbols .symbol .head a.open").get_attribute("href")
    assert href.startswith("idea://open?file=/") and href.endswith("retry.ts&line=6")
    # A web template of the team's forge, and the server's folder mapped to my checkout.
    Select(browser.find_element(By.ID, "link-kind")).select_by_value("web")
    template = browser.find_element(By.ID, "link-template")
    template.clear()
    template.send_keys("https://git.example/acme/blob/main/{path}#L{line}")
    browser.find_element(By.ID, "map-to").send_keys("/home/me/acme")  # a change event saves
    Select(browser.find_element(By.ID, "link-kind")).select_by_value("web")
    browser.execute_script("document.getElementById('link-template').dispatchEvent(new Event('change'))")
    href = browser.find_element(By.CSS_SELECTOR, "#symbols .symbol .head a.open").get_attribute("href")
    assert href == "https://git.example/acme/blob/main/packages/payments-core/src/retry.ts#L6"
    Select(browser.find_element(By.ID, "link-kind")).select_by_value("vscode")
    browser.execute_script("document.getElementById('map-to').dispatchEvent(new Event('change'))")
    href = browser.find_element(By.CSS_SELECTOR, "#symbols .symbol .head a.open").get_attribute("href")
    assert href == "vscode://file/home/me/acme/packages/payments-core/src/retry.ts:6"  # in my checkout
    browser.execute_script("localStorage.clear()")


def test_no_confident_match_is_said_and_the_closest_places_marked_weak(
    server: ThreadServer, browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, server, NONSENSE)
    assert browser.find_element(By.ID, "weak").is_displayed()
    assert browser.find_element(By.ID, "weak").text == "No confident match; the closest places:"
    places = browser.find_elements(By.CSS_SELECTOR, "#symbols .symbol")
    assert 1 <= len(places) <= 3 and all("weak" in p.get_attribute("class") for p in places)
    assert all(p.find_element(By.CSS_SELECTOR, ".badge").text == "weak" for p in places)
    assert browser.find_element(By.ID, "status").text.startswith("No confident match")
    browser.save_screenshot(str(_screenshots(tmp_path) / "page-no-match.png"))


def test_dark_mode_follows_the_system(server: ThreadServer, browser: Any, tmp_path: Path) -> None:
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
    )
    _open(browser, server, "where do we validate the email field")
    background = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
    red, green, blue = (int(part) for part in background[background.index("(") + 1 : -1].split(",")[:3])
    assert red + green + blue < 150, background
    browser.save_screenshot(str(_screenshots(tmp_path) / "page-dark.png"))


def test_an_error_replaces_the_answer_and_says_what_to_do(
    built: tuple[Path, Path], browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    served = _serve(*built)
    try:
        _open(browser, served, "where's the payments retry helper?")
    finally:
        served.stop()  # the server goes away while the page stays open
    _ask(browser, "where do we validate the email field")
    assert not browser.find_element(By.ID, "answer").is_displayed()  # the previous answer is not left standing
    error = browser.find_element(By.ID, "error")
    assert error.is_displayed() and error.get_attribute("role") == "alert"
    assert browser.find_element(By.ID, "error-title").text == "The code-alias server does not answer"
    assert "code-alias serve" in browser.find_element(By.ID, "error-hint").text
    browser.save_screenshot(str(_screenshots(tmp_path) / "page-error.png"))


def test_the_keyboard_reaches_each_results_links_and_buttons(server: ThreadServer, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    _open(browser, server, "where's the payments retry helper?")
    browser.find_element(By.ID, "q").click()
    focused = []
    for _ in range(10):
        browser.switch_to.active_element.send_keys(Keys.TAB)
        element = browser.switch_to.active_element
        focused.append((element.tag_name, element.get_attribute("class") or ""))
    assert ("a", "open") in focused and ("button", "copy small") in focused


def test_code_from_the_index_is_shown_never_run(server: ThreadServer, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, server, "where is the banner html rendered")
    for more in browser.find_elements(By.CSS_SELECTOR, "#symbols button.more"):
        more.click()
    code = browser.find_element(By.ID, "symbols").text
    assert "<script>document.title='pwned'</script>" in code and '<img src=x onerror="document.title' in code
    assert browser.title.endswith("\u2014 code-alias")  # neither the script nor the onerror ran
    assert not browser.find_elements(By.CSS_SELECTOR, "#answer img, #answer script")

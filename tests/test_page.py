"""The search page of `code-alias serve`, used in a real headless browser (Debian's chromium, through Selenium).

Keyboard only: type a prefix, see the dictionary's completions, pick one with the arrow keys and Enter, and see
the ranked symbols with their code lines and `vscode://file/...:LINE` links that name the real file and the line
the code shown starts at. Screenshots (wide and narrow) go to the test's folder, or to `docs/` with
`CODE_ALIAS_PAGE_SCREENSHOTS=docs`. Without chromium, chromedriver or Selenium the browser tests skip, saying which.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from tests.conftest import ACME_REPO
from tests.thread_server import ThreadServer, hostile_copy

pytest.importorskip("hayhooks")
import httpx  # a dependency of hayhooks

REPO = Path(__file__).resolve().parents[1]
TOKEN = "page-token-5e0a"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or shutil.which("chromium-driver")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadServer]:
    from haystack_integrations.components.code_alias.retrieval.search import CodeSearch
    from haystack_integrations.components.code_alias.serving.server import ServerSettings, build_app
    from haystack_integrations.components.code_alias.serving.service import ServiceSettings

    index_dir = tmp_path_factory.mktemp("page-index")
    repo = hostile_copy(ACME_REPO, tmp_path_factory.mktemp("page-repo") / "acme")
    CodeSearch(index_dir, lexical=True).index(repo)
    app = build_app(ServerSettings(token=TOKEN), ServiceSettings(index_dir=index_dir, lexical=True))
    served = ThreadServer(app).start()
    served.repo = repo
    yield served
    served.stop()


def test_the_page_loads_without_the_token_and_its_data_needs_it(server: ThreadServer) -> None:
    page = httpx.get(server.url + "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "connect-src 'self'" in policy
    assert "http" not in page.text.replace("http-equiv", "")  # nothing from another origin (no CDN)
    assert httpx.get(server.url + "/page/page.js").status_code == 200
    assert httpx.get(server.url + "/page/../server.py").status_code in (401, 404)
    assert httpx.get(server.url + "/page/info").status_code == 401
    assert httpx.post(server.url + "/page/ask", json={"question": "retry"}).status_code == 401
    auth = {"authorization": f"Bearer {TOKEN}"}
    info = httpx.get(server.url + "/page/info", headers=auth).json()
    assert "@acme/payments-core" in info["packages"] and info["repositories"] == ["acme"]


def test_page_ask_gives_code_lines_why_and_the_editor_path(server: ThreadServer) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    answer = httpx.post(server.url + "/page/ask", headers=auth, json={"question": "where's the payments retry helper?"})
    assert answer.status_code == 200, answer.text
    first = answer.json()["symbols"][0]
    assert first["qualified_name"].endswith("withStripeBackoff") and first["start_line"] == 6
    assert first["code"]["start_line"] == 6 and "function withStripeBackoff" in first["code"]["lines"][0]
    assert first["editor_path"] == str(server.repo.resolve() / "packages/payments-core/src/retry.ts")
    assert "keyword search" in first["why_words"] and "It defines withStripeBackoff" in first["why_words"]


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
    auth = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
    answer = httpx.post(server.url + "/page/ask", headers=auth, content=body)
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
    options.add_argument("--window-size=1280,1200")
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _screenshots(tmp_path: Path) -> Path:
    return REPO / "docs" if os.environ.get("CODE_ALIAS_PAGE_SCREENSHOTS") == "docs" else tmp_path


def test_type_a_prefix_pick_a_completion_and_see_the_ranked_code(
    server: ThreadServer, browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 30)
    shots = _screenshots(tmp_path)
    browser.get(server.url + f"/#token={TOKEN}")
    assert "token" not in browser.current_url  # taken out of the address bar
    wait.until(ready.visibility_of_element_located((By.ID, "package-label")))  # the filters: several packages
    assert not browser.find_element(By.ID, "repo-label").is_displayed()  # ...and a single repository
    box = browser.find_element(By.ID, "q")
    assert browser.switch_to.active_element == box  # focused on load: keyboard first
    box.send_keys("withSt")
    wait.until(ready.visibility_of_element_located((By.CSS_SELECTOR, "#completions .option")))
    names = [
        option.get_attribute("data-name") for option in browser.find_elements(By.CSS_SELECTOR, "#completions .option")
    ]
    assert names[0] == "withStripeBackoff", names
    assert box.get_attribute("aria-expanded") == "true"
    browser.save_screenshot(str(shots / "page-completions.png"))

    box.send_keys(Keys.ARROW_DOWN)
    assert browser.find_element(By.ID, "completion-0").get_attribute("aria-selected") == "true"
    assert box.get_attribute("aria-activedescendant") == "completion-0"
    box.send_keys(Keys.ENTER)
    wait.until(ready.visibility_of_element_located((By.CSS_SELECTOR, "#symbols .symbol")))
    assert box.get_attribute("value") == "withStripeBackoff"
    first = browser.find_elements(By.CSS_SELECTOR, "#symbols .symbol")[0]
    assert first.find_element(By.CSS_SELECTOR, ".qualified").text.endswith("withStripeBackoff")
    lines = first.find_elements(By.CSS_SELECTOR, "pre.code .line")
    number, code = (
        lines[0].find_element(By.CSS_SELECTOR, ".number").text,
        lines[0].find_element(By.CSS_SELECTOR, ".text").text,
    )
    assert "export async function withStripeBackoff" in code
    keywords = [span.text for span in lines[0].find_elements(By.CSS_SELECTOR, ".tok-keyword")]
    assert keywords[:3] == ["export", "async", "function"]  # highlighted, as text spans
    link = first.find_element(By.CSS_SELECTOR, "a.open")
    href = link.get_attribute("href")
    assert link.text == "packages/payments-core/src/retry.ts:6" and href.startswith("vscode://file/")
    path, _, line = unquote(href[len("vscode://file") :]).rpartition(":")
    # The link opens the real file at the line the code shown starts at.
    assert Path(path).read_text(encoding="utf-8").splitlines()[int(line) - 1].strip() == code.strip()
    assert line == number == "6"
    assert "keyword search" in first.find_element(By.CSS_SELECTOR, ".why").text
    rewrite = browser.find_element(By.ID, "rewrite").text
    assert "withStripeBackoff" in rewrite and "Dropped" in rewrite
    assert "retry.ts" in browser.find_element(By.ID, "files").text
    assert "Error" not in browser.find_element(By.ID, "status").text

    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(shots / "page-answer.png"))

    # Keyboard only: Tab from the box reaches the Ask button, then the result's editor link and its copy button.
    focused = []
    for _ in range(8):
        browser.switch_to.active_element.send_keys(Keys.TAB)
        element = browser.switch_to.active_element
        focused.append((element.tag_name, element.get_attribute("class") or ""))
    assert ("a", "open") in focused and ("button", "copy") in focused

    browser.set_window_size(390, 900)  # a phone's width: one column, nothing wider than the window
    wide = browser.execute_script("return document.documentElement.scrollWidth > window.innerWidth + 1")
    assert not wide
    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(shots / "page-narrow.png"))


def test_code_from_the_index_is_shown_never_run(server: ThreadServer, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server.url + f"/#token={TOKEN}")
    box = WebDriverWait(browser, 30).until(ready.element_to_be_clickable((By.ID, "q")))
    box.send_keys("where is the banner html rendered", Keys.ENTER)
    WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.CSS_SELECTOR, "#symbols .symbol")))
    code = browser.find_element(By.ID, "symbols").text
    assert "<script>document.title='pwned'</script>" in code and '<img src=x onerror="document.title' in code
    assert browser.title == "code-alias search"  # neither the script nor the onerror ran
    assert not browser.find_elements(By.CSS_SELECTOR, "#answer img, #answer script")

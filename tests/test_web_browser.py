"""The web table in a real browser: Playwright drives Debian's headless Chromium against
``piquet serve``'s application, started here by uvicorn on a free port of 127.0.0.1.

A person plays a whole deal by clicks and keys at phone width (an illegal card typed is refused
with the reason shown; a reload mid-deal comes back to the same table), watches two agents to the
end with pause and step, and replays a saved record (from the folder and uploaded).
"""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("starlette", reason="the web table needs the web extra: pip install '.[web]'")
pytest.importorskip("uvicorn", reason="the web table needs the web extra: pip install '.[web]'")
sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (the test extra)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip(
        "no Chromium: apt-get install chromium (.ci/run installs it)",  # conftest.NO_CHROMIUM
        allow_module_level=True,
    )

from piquet_agents.loop import play_game  # noqa: E402
from piquet_env.agent import RandomAgent  # noqa: E402
from piquet_env.game import Game  # noqa: E402
from piquet_env.game.record import save_record  # noqa: E402
from piquet_table.web.app import create_app  # noqa: E402
from tests.web_helpers import make_hub, serving  # noqa: E402

expect = sync_api.expect
TIMEOUT_MS = 15_000

ACTIONS = "button[data-action=declare], button[data-action=done], button[data-action=next]"
CHOICE = f"""() => document.querySelector('#phase').textContent === 'over'
  || document.querySelector('#seat-bottom button[data-card]:not(:disabled)')
  || [...document.querySelectorAll('{ACTIONS}')].some(b => !b.hidden && b.offsetParent !== null)"""
"""True once the person has something to do (or the game is over)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The application on a free port of 127.0.0.1, in a thread; stopped after the module."""
    records = tmp_path_factory.mktemp("records")
    hub = make_hub(records)
    with serving(create_app(hub)) as port:
        yield f"http://127.0.0.1:{port}/", records, hub


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    # bypass_csp: the page allows no eval, which wait_for_function needs (the header is checked
    # in test_web_server.py)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(server[0])
    page.wait_for_selector("body[data-ready=true]")
    yield page
    context.close()
    assert not errors, errors


def _version(page) -> int:
    return int(page.get_attribute("body", "data-version") or -1)


def _after(page, version: int) -> None:
    """Wait until the table has moved on from ``version`` and the person may act again."""
    page.wait_for_function("v => Number(document.body.dataset.version) > v", arg=version)
    page.wait_for_function(CHOICE)


def _enabled_cards(page):
    return page.locator("#seat-bottom button[data-card]:not(:disabled)")


def _act(page) -> None:
    """Make the person's move, whatever is asked (the first legal choice), and wait for the
    answer."""
    version = _version(page)
    if page.is_visible('button[data-action="done"]'):
        _enabled_cards(page).first.click()
        page.click('button[data-action="done"]')
    elif page.is_visible('button[data-action="declare"]'):
        page.click('button[data-action="pass"]')
    elif page.is_visible('button[data-action="next"]'):
        page.click('button[data-action="next"]')
    else:
        _enabled_cards(page).first.click()
    _after(page, version)


def _new_deal(page) -> None:
    page.select_option("#opponent", "random")
    page.select_option("#mode", "deal")
    page.click('button[data-action="new"]')
    page.wait_for_function(CHOICE)


def test_a_deal_by_clicks_and_keys_at_phone_width_with_an_illegal_card_and_a_reload(page):
    page.set_viewport_size({"width": 390, "height": 844})
    page.select_option("#opponent", "random")
    page.select_option("#mode", "deal")
    page.click('button[data-action="new"]')
    page.wait_for_function(CHOICE)
    tried_illegal = reloaded = keyed = False
    for _ in range(200):
        if page.text_content("#phase") == "over":
            break
        version = _version(page)
        if page.is_visible('button[data-action="done"]'):
            assert page.is_disabled('button[data-action="done"]') == (
                "choose 1" in page.text_content("#prompt")
            )
            _enabled_cards(page).first.click()  # select one card to discard
            expect(page.locator("#seat-bottom button[aria-pressed=true]")).to_have_count(1)
            page.click('button[data-action="done"]')
        elif page.is_visible('button[data-action="declare"]'):
            page.keyboard.press("d" if page.is_enabled('button[data-action="declare"]') else "p")
        elif page.is_visible('button[data-action="next"]'):
            page.click('button[data-action="next"]')
        else:
            legal = _enabled_cards(page)
            held = page.locator("#seat-bottom button[data-card]")
            if not tried_illegal and held.count() > legal.count():
                card = page.locator("#seat-bottom button[data-card]:disabled").first
                page.fill("#command-text", card.get_attribute("data-card"))
                page.press("#command-text", "Enter")
                expect(page.locator("#message")).to_contain_text("you must follow")
                assert _version(page) == version  # refused: nothing moved
                tried_illegal = True
                continue
            if not reloaded and page.locator("#sheet tr").count() == 0 and held.count() <= 9:
                page.reload()
                page.wait_for_selector("body[data-ready=true]")
                page.wait_for_function(CHOICE)
                assert _version(page) == version and held.count() == len(
                    page.locator("#seat-bottom button[data-card]").all()
                )
                reloaded = True
                continue
            if not keyed:
                page.focus("body")
                page.keyboard.press("ArrowRight")  # the first legal card
                page.keyboard.press("Enter")
                keyed = True
            else:
                legal.first.click()
        _after(page, version)
    assert page.text_content("#phase") == "over"
    assert tried_illegal and reloaded and keyed
    expect(page.locator("#log")).to_contain_text("The deal is over")
    expect(page.locator("#breakdown")).to_contain_text("deal total")
    expect(page.locator("#totals")).to_contain_text("you ")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at phone width"


def test_watching_two_agents_with_pause_step_and_speed(page):
    page.click('button[data-tab="watch"]')
    page.select_option("#watch-a", "random")
    page.select_option("#watch-b", "heuristic")
    page.select_option("#watch-mode", "deal")
    page.fill("#speed", "2")
    page.click('button[data-action="watch"]')
    page.wait_for_function("Number(document.body.dataset.version) >= 0")
    page.click('button[data-action="pause"]')
    expect(page.locator("#prompt")).to_contain_text("Paused")
    assert page.locator("#seat-top .card").count() > 0  # both hands face up
    assert page.locator("#seat-bottom .card").count() > 0
    version = _version(page)
    page.click('button[data-action="step"]')
    page.wait_for_function("v => Number(document.body.dataset.version) === v + 1", arg=version)
    page.fill("#speed", "0")
    page.dispatch_event("#speed", "change")
    page.click('button[data-action="resume"]')
    expect(page.locator("#phase")).to_have_text("over")
    expect(page.locator("#settlement")).to_contain_text("the deal by")
    expect(page.locator("#log")).to_contain_text("Trick 12 (last)")


def test_replaying_a_record_from_the_folder_and_uploaded(page, server, tmp_path):
    records = server[1]
    game = play_game(Game(seed=9), [RandomAgent(seed=1), RandomAgent(seed=2)])
    path = save_record(records / "20990101-000000-replay-test.json", game, ["human", "random"])
    page.click('button[data-tab="replay"]')
    page.wait_for_selector(f'#record-list option[value="{path.name}"]', state="attached")
    page.select_option("#record-list", path.name)
    page.click('button[data-action="open"]')
    expect(page.locator("#frame-pos")).to_contain_text("step 1 of")
    assert page.locator("#seat-top .card").count() == 12  # both hands, as dealt
    assert page.locator("#seat-bottom .card").count() == 12
    page.focus("body")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#frame-pos")).to_contain_text("step 2 of")
    page.click('button[data-action="next-deal"]')
    expect(page.locator("#deal")).to_have_text("2 of 6")
    page.click('button[data-action="back"]')
    expect(page.locator("#deal")).to_have_text("1 of 6")
    page.click('button[data-action="prev-deal"]')
    for _ in range(6):
        page.click('button[data-action="next-deal"]')
    expect(page.locator("#deal")).to_have_text("6 of 6")
    for _ in range(20):
        page.click('button[data-action="forward"]')
    expect(page.locator("#phase")).to_have_text("over")
    expect(page.locator("#settlement")).to_contain_text("wins the partie by")
    upload = tmp_path / "upload.json"
    upload.write_bytes(path.read_bytes())
    page.set_input_files("#upload", str(upload))
    expect(page.locator("#prompt")).to_contain_text("upload.json (uploaded)")
    (tmp_path / "bad.json").write_text('{"events": []}')
    page.set_input_files("#upload", str(tmp_path / "bad.json"))
    expect(page.locator("#message")).to_contain_text("'events' is empty")
    expect(page.locator("#prompt")).to_have_text("Open a record to replay it.")  # not the last
    tampered = json.loads(path.read_text())
    tampered["events"][0]["rules"]["deals"] = 1000
    (tmp_path / "long.json").write_text(json.dumps(tampered))
    page.set_input_files("#upload", str(tmp_path / "long.json"))
    expect(page.locator("#message")).to_contain_text("deals must be at most 20")
    page.click('button[data-tab="results"]')
    expect(page.locator("#results")).to_contain_text("random")
    expect(page.locator("#results-who")).to_contain_text("any client of this page")


def test_a_table_taken_by_another_window_is_taken_back_with_play_here(page, server):
    _new_deal(page)
    saved = page.evaluate("sessionStorage.getItem('piquet.play')")
    other = page.context.new_page()  # a second window with the table's id and token
    other.add_init_script(f"sessionStorage.setItem('piquet.play', {json.dumps(saved)})")
    other.goto(server[0])
    other.wait_for_selector("body[data-ready=true]")
    other.wait_for_function(CHOICE)
    expect(page.locator("#message")).to_contain_text("opened in another window")
    rejoin = page.locator('button[data-action="rejoin"]')
    expect(rejoin).to_be_visible()
    other.close()
    rejoin.click()
    expect(rejoin).to_be_hidden()
    _act(page)  # played: the table is this window's again
    expect(page.locator("#message-text")).to_have_text("")


def test_a_table_with_a_token_asks_for_it_once(browser, tmp_path):
    hub = make_hub(tmp_path / "records")
    with serving(create_app(hub, token="s3cret-table")) as port:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(f"http://127.0.0.1:{port}/")
        expect(page.locator("#login")).to_be_visible()
        page.fill("#login-token", "wrong")
        page.press("#login-token", "Enter")
        expect(page.locator("#login-message")).to_contain_text("not the token")
        page.fill("#login-token", "s3cret-table")
        page.press("#login-token", "Enter")
        page.wait_for_selector("body[data-ready=true]")
        expect(page.locator("#login")).to_be_hidden()
        _new_deal(page)  # the socket carries the cookie
        page.reload()  # asked once: the cookie stays
        page.wait_for_selector("body[data-ready=true]")
        expect(page.locator("#login")).to_be_hidden()
        context.close()
        assert not errors, errors


def _in_view(page, locator) -> bool:
    """Whether ``locator`` lies within the window, the page scrolled to its top."""
    page.evaluate("window.scrollTo(0, 0)")
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 844


def test_at_phone_width_the_question_the_trick_and_the_hand_show_together(page):
    """At 390x844 the Declare/Pass question, the trick and the hand are on the screen at once;
    the Done button names what is asked; a deal's breakdown says so in the status bar and
    labels its table with the deal."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.select_option("#opponent", "random")
    page.select_option("#mode", "partie")
    page.click('button[data-action="new"]')
    page.wait_for_function(CHOICE)
    seen = set()
    for _ in range(300):
        if {"declare", "play", "breakdown"} <= seen or page.text_content("#phase") == "over":
            break
        done = page.locator('button[data-action="done"]')
        if done.is_visible() and not page.locator("#seat-bottom [aria-pressed=true]").count():
            asked_some = "choose 0" not in page.text_content("#prompt").lower()
            assert done.text_content().startswith("Choose") == asked_some, done.text_content()
            assert done.is_disabled() == asked_some
        elif page.is_visible('button[data-action="declare"]'):
            assert _in_view(page, page.locator('button[data-action="declare"]'))
            assert _in_view(page, page.locator("#prompt"))
            seen.add("declare")
        elif page.is_visible('button[data-action="next"]'):
            assert page.text_content("#phase") == "deal over"
            assert page.locator("#breakdown-table th").first.text_content().startswith("Deal ")
            seen.add("breakdown")
        elif page.locator("#trick .slot .card").count():
            assert _in_view(page, page.locator("#trick"))
            assert _in_view(page, _enabled_cards(page).first)
            seen.add("play")
        _act(page)
    assert {"play", "breakdown"} <= seen, seen
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at phone width"


def test_a_single_game_has_no_interval_on_the_results_page(browser, tmp_path):
    records = tmp_path / "records"
    records.mkdir()
    game = play_game(Game(seed=9, mode="deal"), [RandomAgent(seed=1), RandomAgent(seed=2)])
    save_record(records / "one.json", game, ["human", "random"])
    with serving(create_app(make_hub(records))) as port:
        context = browser.new_context(bypass_csp=True)
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("body[data-ready=true]")
        page.click('button[data-tab="results"]')
        expect(page.locator("#results")).to_contain_text("one game: no interval")
        assert "∞" not in page.text_content("#results")
        context.close()

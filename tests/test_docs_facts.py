"""Facts the pages state that come from data, held to it so they cannot drift: the trained size of each image family
(README, docs/models.md, the workflows' notes and cards: the largest documented size, tests/native_sizes.py, whose
long side is the adapter's) and how many nodes the pack has (the extension's list, each with its docs/nodes.md
section; a page that counts them counts right), and the size the cascade pages give ComfyUI's T5 length."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import native_sizes
import pytest
from headless import cards, make_workflows, registry, runner

ROOT = Path(__file__).resolve().parents[1]
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
COUNTED = r"\b(?:the|its|all|of the) (one|two|three|four|five|six|seven|eight|nine|\d+) (?:node classes|nodes)\b"
#: How README's "Supported models" names each image family, right before its trained size.
README_NAMES = {
    "flux": "Flux.1 (dev, schnell, Krea-dev, Kontext, Fill)", "ovis_image": "Ovis-Image ¹", "flux2": "Flux.2 dev / Klein",
    "chroma": "Chroma1-HD", "chroma_radiance": "Chroma1-Radiance", "qwen_image": "Qwen-Image (Edit, 2512)",
    "z_image": "Z-Image", "lumina2": "Lumina-Image 2.0", "hidream": "HiDream-I1", "hunyuan_image21": "HunyuanImage 2.1",
    "omnigen2": "OmniGen2", "longcat_image": "LongCat-Image ¹", "krea2": "Krea 2 ¹ Turbo", "mage_flow": "Mage-Flow ¹",
    "lens": "Lens ¹", "boogu": "Boogu-Image ¹", "z_image_pixel": "Z-Image pixel space ¹",
    "kandinsky5_image": "Kandinsky 5 Image ¹", "anima": "Anima ¹", "qwen_image21": "Qwen-Image 2.1 ²",
    "nunchaku_flux": "Nunchaku FLUX.1 ³",
}


def _families():
    import host

    return host.pack_submodule("nodes.families")


def image_families() -> list:
    """The image families' adapters (video ones have a non-square trained size of their own, default_base_hw)."""
    return [a for a in _families().ADAPTERS if a.default_base_hw is None]


def section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_each_adapter_takes_its_largest_documented_side():
    for adapter in image_families():
        assert max(native_sizes.largest(adapter.name)) == adapter.default_base_px, adapter.name


def test_readme_and_models_page_give_each_trained_size_from_the_data():
    readme = " ".join(section((ROOT / "README.md").read_text(encoding="utf-8"), "Supported models").split())
    models = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    assert set(README_NAMES) == {adapter.name for adapter in image_families()}
    for adapter in image_families():
        assert f"{README_NAMES[adapter.name]} {native_sizes.readme_words(adapter.name)}" in readme, adapter.name
        if not native_sizes.is_square(adapter.name):  # the table gives the documented size, never the side squared
            long, short = native_sizes.largest(adapter.name)
            rows = [row for row in models.splitlines() if f"the long side of {long}×{short}" in row]
            assert len(rows) == 1 and f"{long}²" not in rows[0], adapter.name


def test_notes_and_cards_give_each_trained_size_from_the_data():
    built = make_workflows.build_all()
    non_square = {a.name: a for a in image_families() if not native_sizes.is_square(a.name)}
    assert {"qwen_image", "hidream", "hunyuan_image21", "longcat_image", "kandinsky5_image", "z_image"} <= set(
        non_square)
    for spec in make_workflows.SPECS:  # the family examples' notes, written from the adapter and the data
        adapter = _families().find_adapter(spec.family)
        note = next(n for n in built[make_workflows.shipped(spec.file)]["nodes"] if n["type"] == "MarkdownNote")
        assert native_sizes.note_words(spec.family, adapter.display_name) in note["widgets_values"][0]
        long = adapter.default_base_px
        assert spec.family not in non_square or f"{long}×{long}" not in note["widgets_values"][0]
    for path in runner.WORKFLOWS_DIR.glob("*.json"):
        wf = runner.load_workflow(path)
        family = registry.MODEL_FAMILY[next(n for n in wf["nodes"] if n["type"] == "UNETLoader")["widgets_values"][0]]
        words = cards.card_facts(wf).get("trained_words")
        if family in non_square and "SEGA recipe" not in path.stem:  # the recipe's own base: test_recipes_host.py
            assert words == native_sizes.card_words(family), path.name
        elif family not in non_square:
            assert words is None, path.name


def node_modules() -> list[tuple[str, str]]:
    """The node modules and classes the extension lists, read from nodes/extension.py's get_node_list."""
    tree = ast.parse((ROOT / "nodes" / "extension.py").read_text(encoding="utf-8"))
    imported = {a.asname or a.name: node.module for node in tree.body if isinstance(node, ast.ImportFrom)
                for a in node.names}
    listed = next(n for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef) and n.name == "get_node_list")
    (returned,) = [n for n in ast.walk(listed) if isinstance(n, ast.Return)]
    return [(imported[e.id], e.id) for e in returned.value.elts]


@pytest.mark.usefixtures("comfy_host")
def test_every_node_has_its_section_and_no_page_miscounts_them():
    import host

    modules = node_modules()
    assert len(modules) >= 4
    reference = (ROOT / "docs" / "nodes.md").read_text(encoding="utf-8")
    for module, class_name in modules:
        schema = getattr(host.pack_submodule(f"nodes.{module}"), class_name).define_schema()
        assert f"### {schema.display_name} (`{schema.node_id}`)" in reference, schema.node_id
    pages = [ROOT / "README.md", ROOT / "nodes" / "__init__.py", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for match in re.finditer(COUNTED, page.read_text(encoding="utf-8")):
            said = NUMBERS.get(match[1]) or int(match[1])
            assert said == len(modules), f"{page.relative_to(ROOT)}: {match[0]!r}, the extension lists {len(modules)}"


@pytest.mark.parametrize("text", ["every input of the three nodes", "holds the 3 node classes"])
def test_the_count_check_catches_a_wrong_count(text):
    match = re.search(COUNTED, text)
    assert match and (NUMBERS.get(match[1]) or int(match[1])) != len(node_modules())


@pytest.mark.usefixtures("comfy_host")
def test_the_t5_length_rows_give_the_hosts_length_and_the_formulas_sizes():
    """docs/imax.md, hiflow.md and hrdit.md: ComfyUI's FLUX.1 T5 pads to 256 tokens (the host's tokenizer), and the
    smaller softmax scale of 256-token prompts against the official 512 is the pack's proportional-attention formula
    (rope/hiflow_stage.py) at 4096² with I-Max's 16 copies, and at 2048² / 4096² with one."""
    import inspect

    import comfy.text_encoders.flux
    import host

    assert "min_length=256" in inspect.getsource(comfy.text_encoders.flux.T5XXLTokenizer.__init__)
    stage = host.pack_submodule("rope.hiflow_stage")
    trained = stage.trained_attention_tokens(64 * 64)

    def smaller(image_tokens: int, copies: int) -> str:  # 1 - scale(256) / scale(512), scale ∝ m²
        short, full = (stage.proportional_temperature(image_tokens + copies * n, trained) for n in (256, 512))
        return f"{100 * (1 - (short / full) ** 2):.3f}"

    assert smaller(256 * 256, 16) == "0.255"
    imax, hiflow, hrdit = ((ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8") for name in
                           ("imax", "hiflow", "hrdit"))
    assert "N = 65,536 + 16 × 256 = 69,632 instead of 73,728, a softmax scale sqrt(log_T N / d) 0.26 % smaller" in imax
    one_copy = f"{smaller(128 * 128, 1)} % smaller at 2048², {smaller(256 * 256, 1)} % at 4096²"
    assert one_copy == "0.078 % smaller at 2048², 0.017 % at 4096²"
    assert one_copy in hiflow and one_copy in hrdit
    assert "at least 256" in hiflow and "at least 256" in hrdit and "at least 256 tokens" in imax

"""Every family's documented native sizes (the sizes its adapter's ``base_source`` cites), and the words the docs,
notes and cards use for the trained size the pack assumes, derived from them so they cannot drift.

The pack takes a family's largest documented long side as its trained size on both axes (FamilyAdapter
``default_base_px``). Where the largest documented size is square, that is the trained size ("1024²"); where it is
not (Qwen-Image: 1664×928), the words give that size and the family's largest square one (1328²), never "1664²".
tests/test_native_sizes.py samples every size here bit-identical to stock; tests/test_trained_size_words.py holds
README, the notes and the cards to these words.
"""

from __future__ import annotations

#: adapter -> (tiny family, [documented (width, height) px], variant option or None, citation in short).
#: Each list is the sizes the cited source documents; the adapter's base_source says where they come from.
NATIVE: dict[str, tuple[str, list[tuple[int, int]], str | None]] = {
    "flux": ("flux", [(1024, 1024)], None),  # DyPE's FLUX base
    "ovis_image": ("ovis_image", [(1024, 1024)], None),
    "flux2": ("flux2", [(2048, 2048), (2048, 1024)], None),  # up to 4 MP
    "chroma": ("chroma", [(1024, 1024)], None),
    "chroma_base": ("chroma", [(512, 512)], "Chroma1-Base (512x512)"),
    "chroma_radiance": ("chroma_radiance", [(1024, 1024)], None),
    "qwen_image": ("qwen_image", [(1328, 1328), (1664, 928), (928, 1664), (1472, 1140), (1140, 1472), (1584, 1056),
                                  (1056, 1584)], None),
    "z_image": ("z_image", [(1024, 1024), (1536, 1536), (2048, 1152), (1152, 2048), (2016, 864), (864, 2016)], None),
    "lumina2": ("lumina2", [(1024, 1024)], None),
    "hidream": ("hidream", [(1024, 1024), (1360, 768), (768, 1360), (1168, 880), (1248, 832)], None),
    "hunyuan_image21": ("hunyuan_image21", [(2048, 2048), (2560, 1536), (1536, 2560), (2304, 1792)], None),
    "omnigen2": ("omnigen2", [(1024, 1024)], None),
    "longcat_image": ("longcat_image", [(1344, 768), (1024, 1024)], None),
    "krea2": ("krea2", [(2048, 2048), (1024, 1024)], None),  # Turbo, the default
    "krea2_raw": ("krea2", [(1024, 1024)], "Krea 2 Raw (1024x1024)"),
    "mage_flow": ("mage_flow", [(2048, 2048), (2048, 512), (512, 2048)], None),
    "lens": ("lens", [(1440, 1440)], None),
    "boogu": ("boogu", [(1024, 1024)], None),
    "z_image_pixel": ("z_image_pixel", [(1024, 1024)], None),
    "kandinsky5_image": ("kandinsky5_image", [(1024, 1024), (1408, 640), (640, 1408), (1280, 768)], None),
    "anima": ("anima", [(1024, 1024)], None),
    "nunchaku_flux": ("nunchaku_flux", [(1024, 1024)], None),  # Flux.1's
    "qwen_image21": ("qwen_image21", [(2048, 2048), (2400, 1792), (1792, 2400), (2528, 1696), (1696, 2528),
                                      (2752, 1536), (1536, 2752)], None),
    "wan21_1_3b": ("wan21_1_3b", [(832, 480), (480, 832)], None),
    "wan_14b": ("wan21", [(1280, 720), (720, 1280), (832, 480)], None),
    "wan_14b_480p": ("wan21", [(832, 480), (480, 832)], "Wan 14B 480P (832x480)"),
    "wan22_5b": ("wan22_5b", [(1280, 704), (704, 1280)], None),
    "hunyuan_video": ("hunyuan_video", [(1280, 720), (720, 1280), (1104, 832), (832, 1104), (960, 960),
                                        (960, 544), (832, 624), (720, 720)], None),
    "hunyuan_video15": ("hunyuan_video15", [(1280, 720), (720, 1280), (848, 480)], None),
    "hunyuan_video15_480p": ("hunyuan_video15", [(848, 480), (480, 848)], "HunyuanVideo 1.5 480p (848x480)"),
}


def documented(case: str) -> list[tuple[int, int]]:
    return NATIVE[case][1]


def largest(case: str) -> tuple[int, int]:
    """The documented (width, height) with the longest side (landscape first)."""
    return max(documented(case), key=lambda size: (max(size), size[0] >= size[1], min(size)))


def largest_square(case: str) -> int | None:
    return max((w for w, h in documented(case) if w == h), default=None)


def is_square(case: str) -> bool:
    width, height = largest(case)
    return width == height


def readme_words(case: str) -> str:
    """README's words: "1024²"; "1664×928 (square 1328²)"."""
    width, height = largest(case)
    if width == height:
        return f"{width}²"
    square = largest_square(case)
    return f"{width}×{height}" + (f" (square {square}²)" if square else "")


def note_words(case: str, name: str) -> str:
    """A note's words, after "the pack takes": "Flux.1 as trained at 1024×1024"; "Qwen-Image's long side, 1664 px
    (1664×928; square 1328×1328), as its trained size on both axes"."""
    width, height = largest(case)
    if width == height:
        return f"{name} as trained at {width}×{height}"
    square = largest_square(case)
    return (f"{name}'s long side, {width} px ({width}×{height}" + (f"; square {square}×{square}" if square else "")
            + "), as its trained size on both axes")


def card_words(case: str) -> str:
    """A card's words (Pillow's own font: "x", not "×"): "trained at 1024 x 1024"; "trained up to 1664 x 928"."""
    width, height = largest(case)
    return f"trained at {width} x {height}" if width == height else f"trained up to {width} x {height}"

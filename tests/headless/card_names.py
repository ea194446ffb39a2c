"""The workflows' file names, which the template browser shows as card titles and searches: number, recipe,
[video], size, model, [frames], the words a user searches for within the search's reach of the start."""

from __future__ import annotations

import re

SIZE_WORDS = {(4096, 4096): "4K 4096px", (3840, 2160): "4K UHD 3840x2160", (1280, 720): "720p 1280x720",
              (1920, 1088): "1080p 1920x1088",
              # the DyPE paper's other settings (paper_workflows.py)
              (2656, 2656): "2.7K 2656px", (2048, 2048): "2K 2048px", (4096, 1360): "4K panorama 4096x1360",
              (6144, 2048): "6K 3:1 6144x2048"}
RECIPE_WORDS = {"published SEGA recipe": "SEGA recipe",  # the card's band reads "published SEGA recipe"
                "HiFlow cascade DyPE + SEGA stages": "HiFlow DyPE + SEGA",
                "HiFlow from image": "HiFlow upscale",
                "HRDiT cascade SEGA stages": "HRDiT + SEGA"}  # it enlarges your own image: "upscale" finds it
SEARCH_REACH = 32  # the last index a searched word may start at (Fuse.js on frontend 1.47: 0.33 × 100, floored)


#: After the model on a card whose note says how to run it on Nunchaku's quantized FLUX.1 (notes.NUNCHAKU_FLUX): the
#: template search (1.53 and later: any word of the name) finds those cards by "Nunchaku".
NUNCHAKU = "or Nunchaku"


def card_name(key: str, number: int, nunchaku: bool = False) -> str:
    """``FLUX.1-dev 4096x4096 DyPE.json``, 2 → ``02 DyPE 4K 4096px FLUX.1-dev.json`` (``nunchaku``: ``... FLUX.1-dev
    or Nunchaku.json``); ``Wan2.1-T2V-1.3B 1280x720 33 frames DyPE.json``, 24 → ``24 DyPE video 720p 1280x720
    Wan2.1-T2V-1.3B 33 frames``."""
    size = re.search(r" (\d+)x(\d+) ", key)
    if size is None or (int(size[1]), int(size[2])) not in SIZE_WORDS:
        raise ValueError(f"{key}: name its size in SIZE_WORDS (what a user would search for)")
    model, tail = key[:size.start()], key[size.end():].removesuffix(".json")
    frames = re.match(r"(\d+ frames) ", tail)
    recipe = tail[frames.end():] if frames else tail
    words = [f"{number:02d}", RECIPE_WORDS.get(recipe, recipe), *(["video"] if frames else []),
             SIZE_WORDS[int(size[1]), int(size[2])], model, *([NUNCHAKU] if nunchaku else []),
             *([frames[1]] if frames else [])]
    return " ".join(words) + ".json"

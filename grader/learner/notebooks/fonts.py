"""A font with CJK glyphs for the Chinese notebooks' figures: matplotlib's default font (DejaVu Sans) has none and
draws Chinese as empty boxes. A system font matplotlib knows, else the Noto Sans CJK SC that the `mplfonts` package
ships (the `zh` extra; its Noto fonts are under the SIL Open Font License)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from grader.language import tr

# system fonts with CJK coverage (simplified Chinese first), by the family names matplotlib's font_manager gives them
SYSTEM = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN", "WenQuanYi Zen Hei",
          "WenQuanYi Micro Hei", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK JP")
PACKAGED = ("mplfonts", "fonts/NotoSansCJKsc-Regular.otf")  # never its SimHei: no free licence covers it
_said: list[bool] = []


def packaged_font() -> Path | None:
    """The Noto Sans CJK SC file of the installed `mplfonts`, found without importing the package; None without it."""
    spec = importlib.util.find_spec(PACKAGED[0])
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (path := Path(folder) / PACKAGED[1]).is_file():
            return path
    return None


def cjk_font() -> str | None:
    """The family name of a font with CJK glyphs: the first of SYSTEM that matplotlib knows, else the packaged one
    (registered with font_manager on the way), else None."""
    from matplotlib import font_manager

    known = {font.name for font in font_manager.fontManager.ttflist}
    if found := next((name for name in SYSTEM if name in known), None):
        return found
    if (path := packaged_font()) is None:
        return None
    font_manager.fontManager.addfont(str(path))
    return next(font.name for font in font_manager.fontManager.ttflist if Path(font.fname) == path)


def use_cjk_font() -> None:
    """Draw the figures' Chinese with a CJK font (Latin letters and digits stay in matplotlib's default font, each
    character falling back to the next family that has it); without one, say once what to install (the figures
    still draw, their Chinese as boxes)."""
    import matplotlib

    name = cjk_font()
    if name is None:
        if not _said:
            _said.append(True)
            print(tr("no font with Chinese glyphs was found, so the figures' Chinese shows as boxes: "
                     "pip install mplfonts (or install Noto Sans CJK SC), then restart the kernel"))
        return
    families = [f for f in matplotlib.rcParams["font.family"] if f != name]
    matplotlib.rcParams["font.family"] = [*families, name]

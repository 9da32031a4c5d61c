"""Which provider answers: Amap for mainland China, Google Maps elsewhere.

The rule, in order (the first that applies decides):

1. ``region`` given by the caller: ``cn`` → Amap, ``intl`` → Google.
2. A Hong Kong, Macau or Taiwan place name (Chinese or Latin script), and no
   mainland city named beside it → Google. These are outside the mainland
   GCJ-02 mandate, their maps are WGS-84, and Google's data there is the
   richer one — even when the text is in Chinese. A cross-border request
   (深圳北站 → 香港西九龍站) goes to Amap, which covers both sides while
   Google has almost no routing in the mainland.
3. A mainland Chinese city or province name, in Chinese or in Latin script
   ("Beijing", "Hangzhou East Station", "Xi'an") → Amap. Bare "China" is not
   enough ("Bank of China, London"), nor are names that double as foreign
   places or dishes abroad ("Canton", "Peking").
4. A well-known foreign place written in Chinese or Japanese (东京, 纽约, 首尔…)
   → Google: Amap's data outside China is thin and needs extra key permission.
5. Any other Chinese characters → Amap.
6. Coordinates inside mainland China → Amap.
7. Chinese characters in the search ``query`` (when the places themselves
   gave no sign: "咖啡" near "Xidan") → Amap.
8. Otherwise → Google.

Steps 2–6 look at the place texts (``location``, ``destination``,
``waypoints``) only: a query like "Sichuan restaurant" says nothing about
where the user is.

Coordinates in inputs are ``lat,lng`` with an optional datum tag
(``31.2304,121.4737 [GCJ-02]``); untagged coordinates are WGS-84 (GPS).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from codev_ls.tools.location.datum import GCJ02, WGS84, LatLng, out_of_china

Region = Literal["cn", "intl"]

# Mainland cities and provinces: Latin spelling (lower case, no apostrophes or
# hyphens) → Chinese name. The Chinese name scopes Amap searches to the city.
MAINLAND_PLACES: dict[str, str] = {
    # municipalities and provincial capitals
    "beijing": "北京", "shanghai": "上海", "tianjin": "天津",
    "chongqing": "重庆", "chungking": "重庆", "guangzhou": "广州",
    "shenzhen": "深圳", "hangzhou": "杭州", "nanjing": "南京", "nanking": "南京",
    "wuhan": "武汉", "chengdu": "成都", "xian": "西安", "changsha": "长沙",
    "zhengzhou": "郑州", "jinan": "济南", "shenyang": "沈阳", "harbin": "哈尔滨",
    "changchun": "长春", "hefei": "合肥", "fuzhou": "福州", "nanchang": "南昌",
    "kunming": "昆明", "guiyang": "贵阳", "nanning": "南宁", "haikou": "海口",
    "lanzhou": "兰州", "xining": "西宁", "yinchuan": "银川", "urumqi": "乌鲁木齐",
    "lhasa": "拉萨", "hohhot": "呼和浩特", "taiyuan": "太原", "shijiazhuang": "石家庄",
    # other large or much-visited cities
    "suzhou": "苏州", "wuxi": "无锡", "changzhou": "常州", "yangzhou": "扬州",
    "ningbo": "宁波", "wenzhou": "温州", "shaoxing": "绍兴", "jiaxing": "嘉兴",
    "huzhou": "湖州", "jinhua": "金华", "yiwu": "义乌", "qingdao": "青岛",
    "yantai": "烟台", "weihai": "威海", "dalian": "大连", "xiamen": "厦门",
    "quanzhou": "泉州", "dongguan": "东莞", "foshan": "佛山", "zhuhai": "珠海",
    "shantou": "汕头", "guilin": "桂林", "yangshuo": "阳朔", "sanya": "三亚",
    "lijiang": "丽江", "luoyang": "洛阳", "kaifeng": "开封", "datong": "大同",
    "pingyao": "平遥", "chengde": "承德", "qinhuangdao": "秦皇岛", "baoding": "保定",
    "tangshan": "唐山", "dunhuang": "敦煌", "kashgar": "喀什", "turpan": "吐鲁番",
    "zhangjiajie": "张家界", "huangshan": "黄山", "wuzhen": "乌镇", "qufu": "曲阜",
    "taian": "泰安", "mianyang": "绵阳", "leshan": "乐山", "yichang": "宜昌",
    "xiangyang": "襄阳", "zhuzhou": "株洲", "xuzhou": "徐州", "nantong": "南通",
    "lianyungang": "连云港", "wuhu": "芜湖", "anqing": "安庆", "ganzhou": "赣州",
    "jingdezhen": "景德镇", "liuzhou": "柳州", "beihai": "北海", "zunyi": "遵义",
    "xishuangbanna": "西双版纳", "baotou": "包头", "ordos": "鄂尔多斯",
    "daqing": "大庆", "jilin": "吉林", "anshan": "鞍山", "dandong": "丹东",
    "hongqiao": "上海", "pudong": "上海", "zhongguancun": "北京",
    # provinces and autonomous regions
    "guangdong": "广东", "zhejiang": "浙江", "jiangsu": "江苏", "shandong": "山东",
    "sichuan": "四川", "yunnan": "云南", "fujian": "福建", "hainan": "海南",
    "hunan": "湖南", "hubei": "湖北", "henan": "河南", "hebei": "河北",
    "shanxi": "山西", "shaanxi": "陕西", "anhui": "安徽", "jiangxi": "江西",
    "guangxi": "广西", "guizhou": "贵州", "gansu": "甘肃", "qinghai": "青海",
    "ningxia": "宁夏", "xinjiang": "新疆", "xizang": "西藏",
    "inner mongolia": "内蒙古", "heilongjiang": "黑龙江", "liaoning": "辽宁",
    "mainland china": "中国",
}  # fmt: skip

# Chinese names of the same places (and a few more), for step 3 on Chinese text.
_MAINLAND_CHINESE = frozenset(MAINLAND_PLACES.values()) | {
    "中国", "大陆", "内地", "天安门", "故宫", "长城", "西湖", "外滩", "浦东", "虹桥",
}  # fmt: skip

# Hong Kong, Macau and Taiwan (step 2): Chinese (simplified and traditional) and Latin.
_HMT_CHINESE = (
    "香港", "九龙", "九龍", "新界", "尖沙咀", "旺角", "銅鑼灣", "中環",
    "澳门", "澳門", "氹仔", "路环", "路環",
    "台湾", "台灣", "臺灣", "台北", "臺北", "新北", "桃园", "桃園", "台中", "臺中",
    "台南", "臺南", "高雄", "基隆", "新竹", "嘉义", "嘉義", "花莲", "花蓮", "宜兰",
    "宜蘭", "澎湖", "金门", "金門", "马祖", "馬祖", "垦丁", "墾丁", "日月潭",
)  # fmt: skip
_HMT_LATIN = (
    "hong kong", "hongkong", "kowloon", "new territories", "tsim sha tsui", "mong kok",
    "causeway bay", "wan chai", "lantau", "sha tin", "macau", "macao", "taipa", "coloane",
    "taiwan", "taipei", "new taipei", "kaohsiung", "taichung", "tainan", "hsinchu",
    "keelung", "hualien", "chiayi", "kinmen", "penghu", "kenting",
)  # fmt: skip

# Foreign places commonly written in Chinese characters or Japanese kanji (step 4).
_FOREIGN_CJK = (
    "日本", "东京", "東京", "大阪", "京都", "横滨", "横浜", "札幌", "名古屋", "福冈", "福岡",
    "冲绳", "沖縄", "奈良", "神户", "神戸", "韩国", "韓国", "首尔", "首爾", "釜山", "济州",
    "濟州", "美国", "纽约", "紐約", "洛杉矶", "旧金山", "西雅图", "芝加哥", "华盛顿",
    "英国", "伦敦", "倫敦", "法国", "巴黎", "德国", "柏林", "意大利", "罗马", "西班牙",
    "新加坡", "马来西亚", "吉隆坡", "泰国", "曼谷", "普吉", "越南", "河内", "胡志明",
    "澳大利亚", "澳洲", "悉尼", "墨尔本", "新西兰", "加拿大", "多伦多", "温哥华", "迪拜",
)  # fmt: skip

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA = re.compile(r"[\u3040-\u30ff]")


def _latin_pattern(names: Iterable[str]) -> re.Pattern[str]:
    alternatives = sorted(names, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in alternatives) + r")\b")


_MAINLAND_RE = _latin_pattern(MAINLAND_PLACES)
_HMT_RE = _latin_pattern(_HMT_LATIN)


def _normalise(text: str) -> str:
    """Lower case, apostrophes and hyphens dropped: ``Xi'an`` and ``Xi-an`` → ``xian``."""
    return re.sub(r"['’`\-]", "", text.lower())


def has_chinese(text: str) -> bool:
    return bool(_CJK.search(text))


def mainland_city(text: str) -> str | None:
    """The Chinese name of a mainland city named in ``text`` (either script), if any."""
    match = _MAINLAND_RE.search(_normalise(text))
    if match:
        return MAINLAND_PLACES[match.group(1)]
    for name in MAINLAND_PLACES.values():
        if name in text and name != "中国":
            return name
    return None


def names_hmt(text: str) -> bool:
    """Whether ``text`` names a place in Hong Kong, Macau or Taiwan."""
    return any(n in text for n in _HMT_CHINESE) or bool(_HMT_RE.search(_normalise(text)))


def _names_mainland(text: str) -> bool:
    return bool(_MAINLAND_RE.search(_normalise(text))) or any(n in text for n in _MAINLAND_CHINESE)


def _names_foreign(text: str) -> bool:
    return bool(_KANA.search(text)) or any(n in text for n in _FOREIGN_CJK)


# ------------------------------------------------------------------ coordinates

_COORD_RE = re.compile(
    r"""^\s*\(?\s*(?P<a>[-+]?\d{1,3}(?:\.\d+)?)\s*[,，]\s*(?P<b>[-+]?\d{1,3}(?:\.\d+)?)\s*\)?
        \s*(?:[\[(]\s*)?(?P<datum>gcj[-_ ]?02|wgs[-_ ]?84)?(?:\s*[\])])?\s*$""",
    re.IGNORECASE | re.VERBOSE,
)


def parse_coordinates(text: str) -> LatLng | None:
    """``lat,lng`` with an optional ``[GCJ-02]``/``[WGS-84]`` tag → a point, else None.

    When the first number cannot be a latitude (|x| > 90) the pair is read as
    ``lng,lat`` (Amap's own order), so pasted Amap coordinates still work.
    """
    match = _COORD_RE.match(text)
    if not match:
        return None
    a, b = float(match.group("a")), float(match.group("b"))
    if abs(a) > 90 >= abs(b):
        a, b = b, a
    if abs(a) > 90 or abs(b) > 180:
        return None
    tag = (match.group("datum") or "").lower()
    datum = GCJ02 if tag.startswith("gcj") else WGS84
    return LatLng(a, b, datum)


def in_hmt(lat: float, lng: float) -> bool:
    """Rough boxes around Hong Kong, Macau and Taiwan (with Kinmen and Matsu)."""
    boxes = (
        (22.15, 22.50, 113.83, 114.44),  # Hong Kong (south of the Shenzhen River)
        (22.10, 22.22, 113.52, 113.61),  # Macau
        (21.80, 25.40, 119.30, 122.10),  # Taiwan and Penghu
        (24.38, 24.53, 118.13, 118.50),  # Kinmen
        (26.10, 26.40, 119.85, 120.55),  # Matsu
    )
    return any(s <= lat <= n and w <= lng <= e for s, n, w, e in boxes)


def in_mainland(point: LatLng) -> bool:
    return not out_of_china(point.lat, point.lng) and not in_hmt(point.lat, point.lng)


# ------------------------------------------------------------------ the decision


@dataclass(frozen=True, slots=True)
class RegionChoice:
    region: Region
    # Why, in a few words, for the result header and the tests.
    reason: str
    # A mainland city named in the texts (Chinese name), to scope Amap searches.
    city: str | None = None


def detect_region(
    texts: Iterable[str | None], forced: Region | None = None, query: str | None = None
) -> RegionChoice:
    """Apply the module's rule to the place texts (and the query) of one request."""
    items = [t for t in texts if t and t.strip()]
    city = next((c for c in (mainland_city(t) for t in items) if c and c != "中国"), None)
    if forced is not None:
        return RegionChoice(forced, f"region={forced} was requested", city)
    mainland = any(_names_mainland(t) for t in items)
    if not mainland and any(names_hmt(t) for t in items):
        return RegionChoice("intl", "Hong Kong, Macau and Taiwan use Google Maps")
    if mainland:
        return RegionChoice("cn", "a mainland Chinese place is named", city)
    if any(_names_foreign(t) for t in items):
        return RegionChoice("intl", "a place outside China is named")
    if any(has_chinese(t) for t in items):
        return RegionChoice("cn", "the text is Chinese", city)
    for t in items:
        point = parse_coordinates(t)
        if point is not None and in_mainland(point):
            return RegionChoice("cn", "the coordinates are in mainland China")
    if query and has_chinese(query) and not _names_foreign(query):
        return RegionChoice("cn", "the query is Chinese")
    return RegionChoice("intl", "no mainland Chinese place is named")

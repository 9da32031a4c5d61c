"""Which provider answers: Amap for mainland China, Google Maps elsewhere.

The rule, in order (the first that applies decides):

1. ``region`` given by the caller: ``cn`` → Amap, ``intl`` → Google.
2. Some place text names a mainland Chinese place → Amap. Mainland places are
   cities and provinces in Chinese or Latin script ("Beijing", "Hangzhou East
   Station", "Xi'an", "Ürümqi") and well-known districts and landmarks
   (西单/Xidan, 外滩/the Bund, Lujiazui…). This includes a cross-border request
   (深圳北站 → 香港西九龍站): Amap covers both sides while Google has almost no
   routing in the mainland.
3. Some place text names Hong Kong, Macau or Taiwan (Chinese or Latin script)
   → Google, even when the text is Chinese (香港, 台北101): they are outside the
   mainland GCJ-02 mandate, their maps are WGS-84, and Google's data there is
   the richer one (Amap's Taiwan data is thin). This departs from the issue's
   "Chinese characters → Amap" on purpose; ``region='cn'`` still forces Amap,
   and without a Google key Amap answers with a note.
4. Some place text names a place abroad written in Chinese or Japanese (东京,
   北海道, 纽约, 首尔) or in Latin script (Tokyo, London, Hanoi) → Google.
5. Any other Chinese characters in a place text → Amap.
6. Coordinates inside mainland China → Amap (either reading of the pair, see
   ``parse_coordinates``).
7. Chinese characters in the search ``query`` (when the places themselves gave
   no sign and none is foreign) → Amap.
8. Otherwise → Google.

Within one text the names are weighed against each other:

- A name followed by a street word is a street, not the place: 南京路 and
  "Nanjing Road" are in Shanghai, 香港路 in Qingdao, 北京道 in Hong Kong. A
  street named after a mainland city is still a (district-strength) sign of
  the mainland; one named after a place elsewhere is no sign at all.
- A Hong Kong, Macau or Taiwan name overrides a mainland name in the same text
  ("Chungking Mansions, Hong Kong"; chungking is an old spelling of Chongqing).
- Overlapping names: the longest wins (北海道, Hokkaido, over 北海, Beihai).
- A mainland city written in Chinese wins over a foreign name (上海日本领事馆:
  Chinese addresses run from the city down); in Latin script the place named
  last wins ("Hunan Restaurant, New York" is in New York, "Nanjing Road,
  Shanghai" in Shanghai). Districts and landmarks lose to a foreign name
  ("West Lake, Hanoi").
- 中国 (China) is a mainland sign only when nothing foreign is named
  (中国银行伦敦分行 is the Bank of China's London branch); "China" in Latin
  script is no sign at all ("Bank of China", "China Garden Restaurant").

``city_of`` gives, per text, the Chinese name of the mainland city it names, to
scope that text's Amap lookups. Names that double as common place names
(中山 — Zhongshan parks, roads and universities are everywhere —, 北海 —
Beihai Park is in Beijing —, 大同, 吉林) scope a lookup only when they stand
alone or carry 市/"city".

Coordinates in inputs are ``lat,lng`` with an optional datum tag
(``31.2304,121.4737 [GCJ-02]``); untagged coordinates are WGS-84 (GPS).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from codev_ls.tools.location.datum import GCJ02, WGS84, LatLng, out_of_china

Region = Literal["cn", "intl"]
Group = Literal["mainland", "hmt", "foreign"]
# city: scopes Amap; ambiguous: a city only when it stands alone or carries 市/city;
# area: a district or landmark (scopes Amap to its city, loses to a foreign name);
# province: a mainland sign that does not scope; weak: 中国 and the like.
Strength = Literal["city", "ambiguous", "area", "province", "weak"]

# Mainland cities: Latin spelling (lower case, no apostrophes, hyphens or diacritics)
# → Chinese name, the value Amap's ``city`` parameter takes.
_CITIES: dict[str, str] = {
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
    "lijiang": "丽江", "dali": "大理", "luoyang": "洛阳", "kaifeng": "开封",
    "pingyao": "平遥", "chengde": "承德", "qinhuangdao": "秦皇岛", "baoding": "保定",
    "tangshan": "唐山", "dunhuang": "敦煌", "kashgar": "喀什", "kashi": "喀什",
    "turpan": "吐鲁番", "zhangjiajie": "张家界", "huangshan": "黄山", "wuzhen": "乌镇",
    "qufu": "曲阜", "taian": "泰安", "mianyang": "绵阳", "leshan": "乐山",
    "yichang": "宜昌", "xiangyang": "襄阳", "zhuzhou": "株洲", "xuzhou": "徐州",
    "nantong": "南通", "lianyungang": "连云港", "wuhu": "芜湖", "anqing": "安庆",
    "ganzhou": "赣州", "jingdezhen": "景德镇", "liuzhou": "柳州", "zunyi": "遵义",
    "xishuangbanna": "西双版纳", "baotou": "包头", "ordos": "鄂尔多斯", "daqing": "大庆",
    "anshan": "鞍山", "dandong": "丹东", "huizhou": "惠州", "jiangmen": "江门",
    "zhaoqing": "肇庆", "zhanjiang": "湛江", "weifang": "潍坊", "zibo": "淄博",
    "linyi": "临沂", "handan": "邯郸", "langfang": "廊坊", "hengyang": "衡阳",
    "yueyang": "岳阳", "zhangzhou": "漳州",
}  # fmt: skip
# Cities whose names are also common names of parks, roads, schools or provinces.
_AMBIGUOUS: dict[str, str] = {
    "zhongshan": "中山", "beihai": "北海", "datong": "大同", "jilin": "吉林",
}  # fmt: skip
# Districts and landmarks → the city they are in (None: found in several cities).
_AREAS: dict[str, str | None] = {
    "xidan": "北京", "wangfujing": "北京", "sanlitun": "北京", "zhongguancun": "北京",
    "guomao": "北京", "qianmen": "北京", "houhai": "北京", "nanluoguxiang": "北京",
    "wudaokou": "北京", "tiananmen": "北京", "haidian": "北京", "xicheng": "北京",
    "dongcheng": "北京", "chaoyang": "北京", "daxing": "北京", "shunyi": "北京",
    "pudong": "上海", "hongqiao": "上海", "lujiazui": "上海", "the bund": "上海",
    "huangpu": "上海", "jingan": "上海", "xuhui": "上海", "yuyuan": "上海",
    "west lake": "杭州", "xihu": "杭州", "jiefangbei": "重庆", "hongyadong": "重庆",
    "chunxi road": "成都", "kuanzhai": "成都", "tianhe": "广州", "baiyun": "广州",
    "futian": "深圳", "luohu": "深圳", "nanshan district": "深圳", "gulangyu": "厦门",
    "xintiandi": None, "mainland china": None,
}  # fmt: skip
_PROVINCES: dict[str, str] = {
    "guangdong": "广东", "zhejiang": "浙江", "jiangsu": "江苏", "shandong": "山东",
    "sichuan": "四川", "yunnan": "云南", "fujian": "福建", "hainan": "海南",
    "hunan": "湖南", "hubei": "湖北", "henan": "河南", "hebei": "河北",
    "shanxi": "山西", "shaanxi": "陕西", "anhui": "安徽", "jiangxi": "江西",
    "guangxi": "广西", "guizhou": "贵州", "gansu": "甘肃", "qinghai": "青海",
    "ningxia": "宁夏", "xinjiang": "新疆", "xizang": "西藏", "tibet": "西藏",
    "inner mongolia": "内蒙古", "heilongjiang": "黑龙江", "liaoning": "辽宁",
}  # fmt: skip

# Chinese-only mainland names beyond the Chinese values of the tables above.
_CHINESE_AREAS: dict[str, str | None] = {
    "西单": "北京", "王府井": "北京", "三里屯": "北京", "中关村": "北京", "天安门": "北京",
    "故宫": "北京", "颐和园": "北京", "南锣鼓巷": "北京", "外滩": "上海", "陆家嘴": "上海",
    "浦东": "上海", "虹桥": "上海", "豫园": "上海", "西湖": "杭州", "解放碑": "重庆",
    "洪崖洞": "重庆", "宽窄巷子": "成都", "春熙路": "成都", "鼓浪屿": "厦门",
    "新天地": None, "长城": None, "大陆": None, "内地": None,
}  # fmt: skip
_CHINESE_WEAK = ("中国",)

# Hong Kong, Macau and Taiwan: Chinese (simplified and traditional) and Latin.
_HMT_CHINESE = (
    "香港", "九龙", "九龍", "新界", "尖沙咀", "旺角", "銅鑼灣", "中環", "灣仔", "重慶大廈",
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

# Places abroad commonly written in Chinese characters or Japanese kanji.
_FOREIGN_CJK = (
    # Japan (kanji as written in Japan and in simplified Chinese)
    "日本", "北海道", "东京", "東京", "大阪", "京都", "横滨", "横浜", "札幌", "名古屋",
    "福冈", "福岡", "冲绳", "沖縄", "奈良", "神户", "神戸", "广岛", "広島", "仙台",
    "函馆", "函館", "小樽", "箱根", "镰仓", "鎌倉", "长崎", "長崎", "熊本", "鹿儿岛",
    "鹿児島", "金泽", "金沢", "富士山", "涩谷", "渋谷", "新宿", "银座", "銀座", "浅草",
    "秋叶原", "秋葉原", "池袋", "心斋桥", "心斎橋", "道顿堀", "道頓堀",
    # Korea
    "韩国", "韓国", "韓國", "首尔", "首爾", "釜山", "济州", "濟州",
    # elsewhere
    "美国", "纽约", "紐約", "洛杉矶", "旧金山", "西雅图", "芝加哥", "华盛顿", "英国",
    "伦敦", "倫敦", "法国", "巴黎", "德国", "柏林", "意大利", "罗马", "西班牙", "新加坡",
    "马来西亚", "吉隆坡", "泰国", "曼谷", "普吉", "越南", "河内", "胡志明", "澳大利亚",
    "澳洲", "悉尼", "墨尔本", "新西兰", "加拿大", "多伦多", "温哥华", "迪拜",
)  # fmt: skip
_FOREIGN_LATIN = (
    "japan", "tokyo", "osaka", "kyoto", "hokkaido", "sapporo", "yokohama", "nagoya",
    "fukuoka", "okinawa", "korea", "seoul", "busan", "jeju", "vietnam", "hanoi",
    "ho chi minh", "saigon", "singapore", "malaysia", "kuala lumpur", "thailand",
    "bangkok", "phuket", "philippines", "manila", "indonesia", "jakarta", "bali",
    "india", "delhi", "mumbai", "dubai", "london", "england", "scotland", "ireland",
    "united kingdom", "paris", "france", "berlin", "germany", "rome", "italy", "madrid",
    "spain", "amsterdam", "netherlands", "moscow", "russia", "new york", "nyc",
    "los angeles", "san francisco", "chicago", "seattle", "boston", "usa",
    "united states", "canada", "toronto", "vancouver", "montreal", "australia",
    "sydney", "melbourne", "new zealand", "auckland", "mexico", "brazil",
)  # fmt: skip

# Kept for callers that want the Latin → Chinese table (cities, ambiguous cities, provinces).
MAINLAND_PLACES: dict[str, str] = {**_CITIES, **_AMBIGUOUS, **_PROVINCES}

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA = re.compile(r"[\u3040-\u30ff]")


@dataclass(frozen=True, slots=True)
class _Entry:
    group: Group
    strength: Strength
    # The Chinese city name that scopes Amap (None: does not scope).
    city: str | None
    latin: bool


def _build() -> dict[str, _Entry]:
    table: dict[str, _Entry] = {}

    def add(name: str, entry: _Entry) -> None:
        table.setdefault(name, entry)

    for latin, chinese in _CITIES.items():
        add(latin, _Entry("mainland", "city", chinese, True))
        add(chinese, _Entry("mainland", "city", chinese, False))
    for latin, chinese in _AMBIGUOUS.items():
        add(latin, _Entry("mainland", "ambiguous", chinese, True))
        add(chinese, _Entry("mainland", "ambiguous", chinese, False))
    for latin, city in _AREAS.items():
        add(latin, _Entry("mainland", "area", city, True))
    for chinese, city in _CHINESE_AREAS.items():
        add(chinese, _Entry("mainland", "area", city, False))
    for latin, chinese in _PROVINCES.items():
        add(latin, _Entry("mainland", "province", None, True))
        add(chinese, _Entry("mainland", "province", None, False))
    for chinese in _CHINESE_WEAK:
        add(chinese, _Entry("mainland", "weak", None, False))
    for name in _HMT_CHINESE:
        add(name, _Entry("hmt", "city", None, False))
    for name in _HMT_LATIN:
        add(name, _Entry("hmt", "city", None, True))
    for name in _FOREIGN_CJK:
        add(name, _Entry("foreign", "city", None, False))
    for name in _FOREIGN_LATIN:
        add(name, _Entry("foreign", "city", None, True))
    return table


_TABLE = _build()


def _alternation(names: Iterable[str]) -> str:
    # Longest first: at one position the longest name wins (北海道 over 北海).
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))


_LATIN_RE = re.compile(
    r"(?<![a-z0-9])(" + _alternation(n for n, e in _TABLE.items() if e.latin) + r")(?![a-z0-9])"
)
_CHINESE_RE = re.compile("(" + _alternation(n for n, e in _TABLE.items() if not e.latin) + ")")

# What follows a city's name when it names a street instead (南京东路, Nanjing West Road).
_LATIN_STREET = re.compile(
    r"\s*(?:(?:east|west|north|south|middle|central|e|w|n|s|dong|xi|nan|bei|zhong)\.?\s*)?"
    r"(?:road|rd|street|st|avenue|ave|lane|boulevard|blvd|lu|jie|dajie|dadao|hutong)(?![a-z])"
)
_CHINESE_STREET = re.compile(r"[东西南北中]?(?:路|街|大街|大道|道|巷|胡同)")
_SEPARATORS = re.compile(r"[,，;；/|、()（）]")


def _normalise(text: str) -> str:
    """Lower case, diacritics, apostrophes and hyphens dropped: ``Xi'an``, ``Ürümqi`` → ``xian``, ``urumqi``."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return re.sub(r"['’`\-]", "", stripped.lower())


@dataclass(frozen=True, slots=True)
class _Mention:
    name: str
    start: int
    end: int
    entry: _Entry
    # Alone in its comma-separated part of the text, or carrying 市/"city".
    standalone: bool


def _is_street(norm: str, end: int, entry: _Entry) -> bool:
    if entry.strength in ("area", "weak"):
        return False  # 西单北大街 is in Xidan; Wangfujing Street in Wangfujing
    pattern = _LATIN_STREET if entry.latin else _CHINESE_STREET
    return pattern.match(norm, end) is not None


def _standalone(norm: str, start: int, end: int) -> bool:
    before = _SEPARATORS.split(norm[:start])[-1].strip()
    after = _SEPARATORS.split(norm[end:])[0].strip()
    return not before and after in ("", "市", "city", "shi")


def _mentions(text: str) -> list[_Mention]:
    """The place names in ``text``, in order, streets named after places left out."""
    norm = _normalise(text)
    found: list[_Mention] = []
    for pattern in (_LATIN_RE, _CHINESE_RE):
        for match in pattern.finditer(norm):
            name = match.group(1)
            entry = _TABLE[name]
            if _is_street(norm, match.end(), entry):
                if entry.group != "mainland":
                    continue  # 香港路 is in Qingdao, Tokyo Street not in Tokyo
                # Nanjing Road is in Shanghai: still a mainland sign, but not Nanjing's.
                entry = _Entry("mainland", "area", None, entry.latin)
            standalone = _standalone(norm, match.start(), match.end()) or (
                not entry.latin and norm.startswith("市", match.end())
            )
            found.append(_Mention(name, match.start(), match.end(), entry, standalone))
    found.sort(key=lambda m: m.start)
    return found


Kind = Literal["mainland", "hmt", "foreign", "none"]


def _classify(text: str, mentions: list[_Mention]) -> Kind:
    """What one place text names, by the weighing rules of the module docstring."""
    if any(m.entry.group == "hmt" for m in mentions):
        return "hmt"
    foreign = [m for m in mentions if m.entry.group == "foreign"]
    mainland = [m for m in mentions if m.entry.group == "mainland" and m.entry.strength != "weak"]
    weak = [m for m in mentions if m.entry.strength == "weak"]
    if _KANA.search(text) and not mainland:
        return "foreign"
    if foreign and mainland:
        strong = [m for m in mainland if m.entry.strength != "area"]
        if any(not m.entry.latin for m in strong):
            return "mainland"
        if strong and max(m.start for m in strong) > max(m.start for m in foreign):
            return "mainland"
        return "foreign"
    if foreign:
        return "foreign"
    if mainland or weak:
        return "mainland"
    return "none"


def has_chinese(text: str) -> bool:
    return bool(_CJK.search(text))


def city_of(text: str | None) -> str | None:
    """The Chinese name of the mainland city ``text`` is in, to scope Amap; else None.

    A city that stands alone (or with 市/"city") comes first, then other cities,
    then the city of a district or landmark; in Chinese the first named (the
    address runs from the city down), in Latin script the last ("Nanjing Road,
    Shanghai" → 上海). Provinces, 中国 and ambiguous names in passing give none.
    """
    if not text or not text.strip():
        return None
    mentions = _mentions(text)
    if _classify(text, mentions) != "mainland":
        return None
    ranked: list[tuple[tuple[int, int, int], str]] = []
    for m in mentions:
        e = m.entry
        if e.group != "mainland" or e.city is None:
            continue
        if e.strength == "city":
            rank = 0 if m.standalone else 1
        elif e.strength == "ambiguous":
            if not m.standalone:
                continue
            rank = 0
        elif e.strength == "area":
            rank = 2
        else:
            continue
        order = -m.start if e.latin else m.start
        ranked.append(((rank, 1 if e.latin else 0, order), e.city))
    return min(ranked)[1] if ranked else None


def mainland_city(text: str) -> str | None:
    """Alias of :func:`city_of`, kept for callers of the first version."""
    return city_of(text)


def names_hmt(text: str) -> bool:
    """Whether ``text`` names a place in Hong Kong, Macau or Taiwan."""
    return _classify(text, _mentions(text)) == "hmt"


# ------------------------------------------------------------------ coordinates

_COORD_RE = re.compile(
    r"""^\s*\(?\s*(?P<a>[-+]?\d{1,3}(?:\.\d+)?)\s*[,，]\s*(?P<b>[-+]?\d{1,3}(?:\.\d+)?)\s*\)?
        \s*(?:[\[(]\s*)?(?P<datum>gcj[-_ ]?02|wgs[-_ ]?84)?(?:\s*[\])])?\s*$""",
    re.IGNORECASE | re.VERBOSE,
)

Order = Literal["latlng", "amap"]


def parse_coordinates(text: str, order: Order = "latlng") -> LatLng | None:
    """``lat,lng`` with an optional ``[GCJ-02]``/``[WGS-84]`` tag → a point, else None.

    Which number is the latitude:

    - the first number cannot be a latitude (|x| > 90): the pair is ``lng,lat``;
    - both could be latitudes ("87.6,43.8": Ürümqi in Amap's ``lng,lat`` order,
      or a point in the Arctic read as ``lat,lng``): with ``order="amap"`` (the
      provider is Amap, whose convention is ``lng,lat``) the reading that lies
      in China is taken when only that one does; otherwise ``lat,lng``.
    """
    match = _COORD_RE.match(text)
    if not match:
        return None
    a, b = float(match.group("a")), float(match.group("b"))
    first_is_lng = abs(a) > 90 >= abs(b)
    # Both could be latitudes: Amap's order when only that reading is in China.
    amap_order = order == "amap" and abs(b) <= 90 and out_of_china(a, b) and not out_of_china(b, a)
    if first_is_lng or amap_order:
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
    """Inside the China box and outside Hong Kong, Macau and Taiwan (a rough test)."""
    return not out_of_china(point.lat, point.lng) and not in_hmt(point.lat, point.lng)


def _coordinates_in_mainland(text: str) -> bool:
    for order in ("latlng", "amap"):
        point = parse_coordinates(text, order)  # type: ignore[arg-type]
        if point is not None and in_mainland(point):
            return True
    return False


# ------------------------------------------------------------------ the decision


@dataclass(frozen=True, slots=True)
class RegionChoice:
    region: Region
    # Why, in a few words, for the result header and the tests.
    reason: str
    # The city of the first place text that names one (each text is scoped by its own
    # ``city_of`` when Amap looks it up; this one is for display and tests).
    city: str | None = None


def detect_region(
    texts: Iterable[str | None], forced: Region | None = None, query: str | None = None
) -> RegionChoice:
    """Apply the module's rule to the place texts (and the query) of one request."""
    items = [t for t in texts if t and t.strip()]
    kinds = [_classify(t, _mentions(t)) for t in items]
    city = next((c for c in (city_of(t) for t in items) if c), None)
    if forced is not None:
        return RegionChoice(forced, f"region={forced} was requested", city)
    if "mainland" in kinds:
        return RegionChoice("cn", "a mainland Chinese place is named", city)
    if "hmt" in kinds:
        return RegionChoice("intl", "Hong Kong, Macau and Taiwan use Google Maps")
    if "foreign" in kinds:
        return RegionChoice("intl", "a place outside China is named")
    if any(has_chinese(t) for t in items):
        return RegionChoice("cn", "the text is Chinese", city)
    if any(_coordinates_in_mainland(t) for t in items):
        return RegionChoice("cn", "the coordinates are in mainland China")
    if query and has_chinese(query) and _classify(query, _mentions(query)) != "foreign":
        return RegionChoice("cn", "the query is Chinese")
    return RegionChoice("intl", "no mainland Chinese place is named")

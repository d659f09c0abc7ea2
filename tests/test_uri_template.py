"""RFC 6570 URI Templates: parsing, expansion (every example of sections 1.2 and 3),
matching back to values, and the matcher's bounded work on hostile input."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.exceptions import LocalProtocolError
from mcpkit.protocol._uri_template import UriTemplate, is_template
from mcpkit.protocol._uri_template_match import _EPS, _LIT, _normalise, _run

Values = Mapping[str, str | Sequence[str] | Mapping[str, str] | None]

KEYS = {"semi": ";", "dot": ".", "comma": ","}

# RFC 6570 section 1.2, "Levels and Expression Types": the variables of all four levels.
LEVELS: Values = {
    "var": "value",
    "hello": "Hello World!",
    "path": "/foo/bar",
    "empty": "",
    "x": "1024",
    "y": "768",
    "list": ["red", "green", "blue"],
    "keys": KEYS,
}

# RFC 6570 section 3.2, the variables of every expansion example in section 3.
SECTION_3: Values = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": KEYS,
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

LEVEL_EXAMPLES = [
    # Level 1
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    # Level 2
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    # Level 3
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    # Level 4
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]

SECTION_3_EXAMPLES = [
    # 3.2.1 Variable Expansion
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # 3.2.2 Simple String Expansion
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    # 3.2.3 Reserved Expansion
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    # 3.2.4 Fragment Expansion
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    # 3.2.5 Label Expansion with Dot-Prefix
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # 3.2.6 Path Segment Expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    # 3.2.7 Path-Style Parameter Expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    # 3.2.8 Form-Style Query Expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    # 3.2.9 Form-Style Query Continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&x,y,undef}", "&x=1024&y=768"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]


@pytest.mark.parametrize(("template", "expected"), LEVEL_EXAMPLES)
def test_expand_section_1_2_examples(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(LEVELS) == expected


@pytest.mark.parametrize(("template", "expected"), SECTION_3_EXAMPLES)
def test_expand_section_3_examples(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(SECTION_3) == expected


@pytest.mark.parametrize(
    ("template", "values", "expected"),
    [
        pytest.param("caf\u00e9/{x}", {"x": "1"}, "caf%C3%A9/1", id="literal ucschar encoded"),
        pytest.param("a%2fb{x}", {"x": "1"}, "a%2fb1", id="literal pct-encoding kept"),
        pytest.param("{x}", {"x": "\u00e9\u20ac"}, "%C3%A9%E2%82%AC", id="utf-8 encoded"),
        pytest.param("{+x}", {"x": "%2F%zz"}, "%2F%25zz", id="reserved keeps triplets only"),
        pytest.param("{+x:2}", {"x": "%2Fab"}, "%2Fa", id="prefix never splits a triplet"),
        pytest.param("{x:2}", {"x": "%2Fab"}, "%252", id="prefix counts '%' in U"),
        pytest.param("{x:1}", {"x": "\u00e9t\u00e9"}, "%C3%A9", id="prefix counts characters"),
        pytest.param("{x}", {}, "", id="missing is undefined"),
        pytest.param("{?x,y}", {"x": [], "y": {}}, "", id="empty composites are undefined"),
        pytest.param("{?list*}", {"list": ["a", ""]}, "?list=a&list=", id="empty member"),
        pytest.param("{;list*}", {"list": ["a", ""]}, ";list=a;list", id="empty member ;"),
        pytest.param("{?k*}", {"k": {"a": ""}}, "?a=", id="empty pair value"),
        pytest.param("{k*}", {"k": {"a b": "c"}}, "a%20b=c", id="pair names encoded"),
        pytest.param("{;list}", {"list": [""]}, ";list", id="empty joined list"),
        pytest.param("{x}", {"x": ("a", "b")}, "a,b", id="tuple is a list"),
        pytest.param("X", {"X": "unused"}, "X", id="no expressions"),
    ],
)
def test_expand_details(template: str, values: Values, expected: str) -> None:
    assert UriTemplate(template).expand(values) == expected


@pytest.mark.parametrize(
    ("template", "values", "message"),
    [
        ("{keys:1}", {"keys": KEYS}, "prefix modifier cannot apply to the composite value"),
        ("{+list:1}", {"list": ["a"]}, "prefix modifier cannot apply to the composite value"),
        ("{x}", {"x": 5}, "must be a str, a sequence of str, a mapping of str to str or None"),
        ("{x}", {"x": b"ab"}, "not bytes"),
        ("{x}", {"x": ["a", 1]}, "the members of 'x' must all be str"),
        ("{x}", {"x": {"a": None}}, "the members of 'x' must all be str"),
        ("{x}", {"x": "\ud800"}, "lone surrogate"),
    ],
)
def test_expand_errors(template: str, values: dict[str, object], message: str) -> None:
    with pytest.raises(LocalProtocolError, match=re.escape(message)):
        UriTemplate(template).expand(values)  # type: ignore[arg-type]


# (template, problem, position): RFC 6570 section 2 syntax errors, including the
# uritemplate-test suite's negative tests that are syntax errors.
PARSE_ERRORS = [
    ("{/id*", "'{' is never closed", 0),
    ("/id*}", "'}' without a matching '{'", 4),
    ("a{b}c}", "'}' without a matching '{'", 5),
    ("{x{y}}", "'{' inside an expression", 2),
    ("/sparql{?query){&default-graph-uri*}", "'{' inside an expression", 15),
    ("{}", "empty expression", 0),
    ("{/?id}", "character '?' in variable name", 2),
    ("{??hello}", "character '?' in variable name", 2),
    ("{$var}", "character '$' in variable name", 1),
    ("{*keys?}", "character '*' in variable name", 1),
    ("{?empty=default,var}", "character '=' in variable name", 7),
    ("{var}{-prefix|/-/|var}", "character '-' in variable name", 6),
    ("x{?empty|foo=none}", "character '|' in variable name", 8),
    ("/h{#hello+}", "character '+' in variable name", 9),
    ("/h#{hello+}", "character '+' in variable name", 9),
    ("/people/{~thing}", "character '~' in variable name", 9),
    ("/resolution{?x, y}", "character ' ' in variable name", 15),
    ("{x*:3}", "character '*' in variable name", 2),
    ("{x%2}", "character '%' in variable name", 2),
    ("{x.}", "misplaced '.' in variable name", 2),
    ("{.x..y}", "misplaced '.' in variable name", 4),
    ("{..x}", "misplaced '.' in variable name", 2),
    ("{x,}", "empty variable name", 3),
    ("{a,,b}", "empty variable name", 3),
    ("{!hello}", "operator '!' is reserved", 1),
    ("{=path}", "operator '=' is reserved", 1),
    ("{|var*}", "operator '|' is reserved", 1),
    ("{,x}", "operator ',' is reserved", 1),
    ("{@x}", "operator '@' is reserved", 1),
    ("{var:prefix}", "prefix length 'prefix' is not an integer from 1 to 9999", 5),
    ("{hello:2*}", "prefix length '2*' is not an integer from 1 to 9999", 7),
    ("{x:0}", "prefix length '0'", 3),
    ("{x:01}", "prefix length '01'", 3),
    ("{x:10000}", "prefix length '10000'", 3),
    ("{x:}", "prefix length ''", 3),
    ("{/a,x:\u0665}", "prefix length '\u0665'", 6),
    ("?q={searchTerms}&amp;c={example:color?}", "prefix length 'color?'", 32),
    ("a b", "character ' ' is not allowed", 1),
    ("it's/{x}", 'character "\'" is not allowed', 2),
    ("a<b", "character '<' is not allowed", 1),
    ("a\\b", "character '\\\\' is not allowed", 1),
    ("a\nb", "character '\\n' is not allowed", 1),
    ("a\x7fb", "character '\\x7f' is not allowed", 1),
    ("a\ufffeb", "character '\\ufffe' is not allowed", 1),
    ("a\U000e0001", "character '\\U000e0001' is not allowed", 1),
    ("50%", "'%' not followed by two hex digits", 2),
    ("%g0{x}", "'%' not followed by two hex digits", 0),
]


@pytest.mark.parametrize(("template", "problem", "position"), PARSE_ERRORS)
def test_invalid_templates(template: str, problem: str, position: int) -> None:
    with pytest.raises(LocalProtocolError) as caught:
        UriTemplate(template)
    message = str(caught.value)
    assert message.startswith(f"invalid URI template {template!r}: "), message
    assert problem in message, message
    assert f" at position {position} (RFC 6570 section 2" in message, message
    assert isinstance(caught.value, ValueError)
    assert not is_template(template)


def test_limits() -> None:
    UriTemplate("x" * 8192)
    with pytest.raises(LocalProtocolError, match="longer than the limit of 8192 characters"):
        UriTemplate("x" * 8193)
    with pytest.raises(LocalProtocolError, match=r"limit of 10 characters at position 10$"):
        UriTemplate("{abcdefghij}", max_length=10)
    assert UriTemplate("{" + ",".join(f"v{i}" for i in range(256)) + "}").variables[-1] == "v255"
    with pytest.raises(LocalProtocolError, match="more than the limit of 256 variables"):
        UriTemplate("{" + ",".join(f"v{i}" for i in range(257)) + "}")
    with pytest.raises(LocalProtocolError, match=r"limit of 2 variables at position 7$"):
        UriTemplate("{a}/{b}{c}/{d}", max_variables=2)


@pytest.mark.parametrize(
    "template",
    [
        "",
        "file:///static.txt",
        "/vars/:var",  # the uritemplate-test suite calls it invalid; RFC 6570 section 2.1 allows it
        "caf\u00e9\U000f0000/[v6]!$&()*+,;=@~_-.",
        "%2F%aa",
        "{keys:1}",  # only its expansion is an error (section 2.4.1)
        "{x:9999}{y*}{a.b_C%2F1}",
    ],
)
def test_valid_templates(template: str) -> None:
    assert str(UriTemplate(template)) == template


def test_accessors_equality_and_hash() -> None:
    t = UriTemplate("file:///{dir}/{+path}{?q,dir}{#frag*}")
    assert t.variables == ("dir", "path", "q", "frag")
    assert t.template == str(t) == "file:///{dir}/{+path}{?q,dir}{#frag*}"
    assert repr(t) == "UriTemplate('file:///{dir}/{+path}{?q,dir}{#frag*}')"
    assert t == UriTemplate("file:///{dir}/{+path}{?q,dir}{#frag*}")
    assert t != UriTemplate("file:///{dir}/{path}{?q,dir}{#frag*}")
    assert t != "file:///{dir}/{+path}{?q,dir}{#frag*}"
    assert len({t, UriTemplate(t.template)}) == 1
    assert UriTemplate("static").variables == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("file:///{path}", True),
        ("{x}", True),
        ("a{?q}", True),
        ("file:///static.txt", False),
        ("", False),
        ("no braces, spaces are fine here", False),
        ("file:///{unclosed", False),
        ("file:///}{x}", False),
        ("{}", False),
        ("{a b}", False),
        ("a b/{x}", False),
    ],
)
def test_is_template(text: str, expected: bool) -> None:
    assert is_template(text) is expected


# (template, uri, variables or None): the semantics documented on UriTemplate.match.
MATCHES = [
    # simple values never cross '/', '?' or '#', but may hold other reserved characters
    ("file:///{name}", "file:///notes.txt", {"name": "notes.txt"}),
    ("file:///{name}", "file:///a/b.txt", None),
    ("file:///{name}", "file:///a?b", None),
    ("file:///{name}", "file:///a#b", None),
    ("file:///{name}", "file:///a:b@c!$&'()*+,;=", {"name": "a:b@c!$&'()*+,;="}),
    ("file:///{name}", "file:///", None),
    ("users/{id}/profile", "users/42/profile", {"id": "42"}),
    ("users/{id}/profile", "users/42/profile/", None),
    ("users/{id}/profile", "users//profile", None),
    # pct-decoding, UTF-8, and normalisation of the URI and the literals (RFC 3986 6.2.2)
    ("{hello}", "Hello%20World%21", {"hello": "Hello World!"}),
    ("{x}", "caf%c3%a9", {"x": "caf\u00e9"}),
    ("{x}", "caf\u00e9", {"x": "caf\u00e9"}),
    ("caf\u00e9/{x}", "caf%C3%A9/1", {"x": "1"}),
    ("caf\u00e9/{x}", "caf\u00e9/1", {"x": "1"}),
    ("a%2fb/{x}", "a%2Fb/1", {"x": "1"}),
    ("a%2Fb/{x}", "a/b/1", None),
    ("~{x}", "%7E1", {"x": "1"}),
    ("%7E{x}", "~1", {"x": "1"}),
    ("{x}", "a%2Fb", {"x": "a/b"}),
    ("{x}", "%FF", None),  # not UTF-8
    ("{x}", "50%", None),
    ("{x}", "%zz", None),
    ("{x}", "\ud800", None),
    ("{x}A", "%41%41", {"x": "A"}),
    ("{x}1", "a%41", None),  # "1" sits inside a triplet: never split one
    ("{x}/{y}", "%2F/%2F", {"x": "/", "y": "/"}),
    # reserved and fragment expansion take anything
    ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
    ("{+path}/here", "/foo/bar/here", {"path": "/foo/bar"}),
    ("here?ref={+path}", "here?ref=/foo/bar", {"path": "/foo/bar"}),
    ("{+x}", "a?b#c", {"x": "a?b#c"}),
    ("{+x}", "", None),
    ("X{#hello}", "X#Hello%20World!", {"hello": "Hello World!"}),
    ("X{#hello}", "X", {}),
    ("X{#x}", "X#", {"x": ""}),
    ("{+path,x}/here", "/foo/bar,1024/here", {"path": "/foo/bar", "x": "1024"}),
    ("{#path,x}/here", "#/foo/bar,1024/here", {"path": "/foo/bar", "x": "1024"}),
    # several unnamed values fill from the left and stop at the separator
    ("map?{x,y}", "map?1024,768", {"x": "1024", "y": "768"}),
    ("map?{x,y}", "map?1024", {"x": "1024"}),
    ("map?{x,y}", "map?1024,", {"x": "1024", "y": ""}),
    ("map?{x,y}", "map?,768", None),
    ("map?{x,y}", "map?", None),
    (
        "{x,hello,y}",
        "1024,Hello%20World%21,768",
        {"x": "1024", "hello": "Hello World!", "y": "768"},
    ),
    ("{list}", "red,green,blue", {"list": "red,green,blue"}),
    ("{list*}", "red,green,blue", {"list": "red,green,blue"}),
    ("{keys*}", "semi=%3B,dot=.", {"keys": "semi=%3B,dot=."}),
    ("{x,list*}", "a,b,c", {"x": "a", "list": "b,c"}),
    # labels and path segments: the operator character shows a value is present
    ("X{.var}", "X.value", {"var": "value"}),
    ("X{.var}", "X.a.b", {"var": "a.b"}),
    ("X{.x,y}", "X.1024.768", {"x": "1024", "y": "768"}),
    ("X{.x,y}", "X.a.b.c", None),
    ("X{.var}", "X", {}),
    ("X{.var}", "X.", {"var": ""}),
    ("www{.dom*}", "www.example.com", {"dom": "example.com"}),
    ("{/var}", "/value", {"var": "value"}),
    ("{/var}", "/", {"var": ""}),
    ("{/var}", "", {}),
    ("{/var}", "/a/b", None),
    ("{/var,x}/here", "/value/1024/here", {"var": "value", "x": "1024"}),
    ("{/var,empty}", "/value/", {"var": "value", "empty": ""}),
    ("{/list*}", "/red/green/blue", {"list": "red/green/blue"}),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo", {"list": "red/green/blue/%2Ffoo"}),
    ("{/list*}{?q}", "/a/b?q=1", {"list": "a/b", "q": "1"}),
    ("files{/path*}", "files", {}),
    # path-style parameters and queries: names mark the values, all optional
    ("{;x,y}", ";x=1024;y=768", {"x": "1024", "y": "768"}),
    ("{;x,y,empty}", ";x=1024;y=768;empty", {"x": "1024", "y": "768", "empty": ""}),
    ("{;v,empty,who}", ";v=6;empty;who=fred", {"v": "6", "empty": "", "who": "fred"}),
    ("{;v,bar,who}", ";v=6;who=fred", {"v": "6", "who": "fred"}),
    ("{;x}", ";x=", None),
    ("{;x}", ";y=1", None),
    ("{;list*}", ";list=red;list=green", {"list": "list=red;list=green"}),
    ("{;keys}", ";keys=semi,%3B,dot,.", {"keys": "semi,;,dot,."}),
    ("{?x,y}", "?x=1024&y=768", {"x": "1024", "y": "768"}),
    ("{?x,y}", "?y=768", {"y": "768"}),
    ("{?x,y}", "?y=768&x=1024", None),  # expansion keeps the template's order
    ("{?x,y}", "?x=1&x=2", None),
    ("{?x,y}", "", {}),
    ("{?x,y}", "?", None),
    ("{?x,y,empty}", "?x=1024&y=768&empty=", {"x": "1024", "y": "768", "empty": ""}),
    ("{?x}", "?x", None),
    ("{?q}", "?q=a/b?c=d", {"q": "a/b?c=d"}),
    ("{?q}", "?q=a&b", None),
    ("{?q}{#f}", "?q=a#b", {"q": "a", "f": "b"}),
    ("search{?q,lang}", "search?q=mcp", {"q": "mcp"}),
    ("search{?q,lang}", "search", {}),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024", {"x": "1024"}),
    ("{?list*}", "?list=red&list=green", {"list": "list=red&list=green"}),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C", {"keys": "semi=%3B&dot=.&comma=%2C"}),
    ("{?a*,b}", "?x=1&b=2", {"a": "x=1&b=2"}),  # an exploded value is greedy too
    # ambiguity: leftmost-longest that still lets the rest match, present before absent
    ("{name}.txt", "a.b.txt", {"name": "a.b"}),
    ("{name}.txt", ".txt", None),
    ("{a}{b}", "xyz", {"a": "xy", "b": "z"}),
    ("{a}{b}", "x", None),
    ("{a}-{b}-c", "x-y-c", {"a": "x", "b": "y"}),
    ("{a}{/b}", "x/y", {"a": "x", "b": "y"}),
    ("{+a}/{b}", "x/y/z", {"a": "x/y", "b": "z"}),
    ("{a}{.b}", "x.y", {"a": "x.y"}),
    ("{/a}/", "/", {}),
    ("{/a}/", "//", {"a": ""}),
    # variables used more than once must agree; prefixed uses are prefixes
    ("{x}/{x}", "a/a", {"x": "a"}),
    ("{x}/{x}", "a/b", None),
    ("{/var:1,var}", "/v/value", {"var": "value"}),
    ("{/var:1,var}", "/w/value", None),
    ("{x:3}", "abcdef", {"x": "abcdef"}),  # prefix lengths are not checked
    ("{x:2}/{x:3}", "ab/abc", {"x": "abc"}),
    ("{x:3}/{x:2}", "abc/ab", {"x": "abc"}),
    ("{x:2}/{x:2}", "ab/ac", None),
    # no expressions at all
    ("file:///static.txt", "file:///static.txt", {}),
    ("file:///static.txt", "file:///static.txtx", None),
    ("", "", {}),
    ("", "a", None),
]


@pytest.mark.parametrize(("template", "uri", "expected"), MATCHES)
def test_match(template: str, uri: str, expected: dict[str, str] | None) -> None:
    t = UriTemplate(template)
    found, steps = t._match(uri, 65536)
    assert found == expected
    assert t.match(uri) == expected
    assert steps <= t._step_bound()


@pytest.mark.parametrize(
    ("template", "expected", "values"),
    [(t, e, LEVELS) for t, e in LEVEL_EXAMPLES]
    + [(t, e, SECTION_3) for t, e in SECTION_3_EXAMPLES],
)
def test_spec_expansions_match_back(template: str, expected: str, values: Values) -> None:
    """Every expansion in the RFC matches its template again, except where ``{x}`` or
    ``{+x}`` expanded to nothing; where only string variables are involved, the values
    found expand to the same URI (lists and mappings come back as one joined string)."""
    t = UriTemplate(template)
    found = t.match(expected)
    if template.startswith(("O{", "O{+")):
        assert found is None
        return
    assert found is not None
    if all(isinstance(values.get(name), (str, type(None))) for name in t.variables):
        assert t.expand(found) == expected


def test_match_length_limit() -> None:
    t = UriTemplate("{+x}")
    assert t.match("a" * 65536) == {"x": "a" * 65536}
    assert t.match("a" * 65537) is None
    assert t.match("abcd", max_uri_length=3) is None
    assert t.match("abc", max_uri_length=3) == {"x": "abc"}
    # measured in URI form: each "é" is six characters once pct-encoded
    assert t.match("\u00e9", max_uri_length=6) == {"x": "\u00e9"}
    assert t.match("\u00e9", max_uri_length=5) is None


HOSTILE = [
    # many adjacent expressions: every split of the run is a candidate
    pytest.param("".join(f"{{v{i}}}" for i in range(64)), "a" * 65536, True, id="adjacent"),
    pytest.param(
        "".join(f"{{v{i}}}" for i in range(64)) + "!", "a" * 65536, False, id="adjacent-fail"
    ),
    # the classic catastrophic-backtracking shape for a regex translation
    pytest.param(
        "-".join(f"{{v{i}}}" for i in range(32)) + "!", "a-" * 32768, False, id="separated-fail"
    ),
    pytest.param("{a}{+b}{c}{#d}{e}", "/" * 65536, False, id="reserved-fail"),
    pytest.param("{a}{/b,c}{.d}{;e}{?f,g}{&h}{#i}!", ";e=&" * 16384, False, id="all-operators"),
    pytest.param("{a}%2F{b}", "%2F" * 21845 + "a", True, id="triplets"),
    pytest.param(
        "{?" + ",".join(f"q{i}" for i in range(64)) + "}",
        "?q1=" + "&q1=" * 16382,
        False,
        id="named",
    ),
]


@pytest.mark.parametrize(("template", "uri", "matches"), HOSTILE)
def test_hostile_input_takes_bounded_work(template: str, uri: str, matches: bool) -> None:
    """The matcher's work is a number of whole-URI bit-vector operations (each linear in the
    URI's length, done in C) that depends on the template alone: never more than
    ``_step_bound()``, however the URI is built. No wall-clock assertion is needed."""
    t = UriTemplate(template)
    assert len(uri) <= 65536
    found, steps = t._match(uri, 65536)
    assert (found is not None) is matches
    assert 0 < steps <= t._step_bound()
    assert t._step_bound() < 4000
    # the same bound holds for a short URI: the work does not grow with the URI's length
    assert t._match(uri[:64], 65536)[1] <= t._step_bound()


def test_adjacent_expressions_are_greedy_from_the_left() -> None:
    t = UriTemplate("".join(f"{{v{i}}}" for i in range(64)))
    found = t.match("a" * 65536)
    assert found is not None
    assert found["v0"] == "a" * (65536 - 63)
    assert all(found[f"v{i}"] == "a" for i in range(1, 64))


# Round trip, level 1: values drawn so that no literal character can occur in their
# expansion (they are letters, digits and characters that are always pct-encoded), so the
# URI has exactly one reading.
SAFE_VALUE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 /?#%,&\u00e9\u20ac", min_size=1)
LITERAL = "/.-:@!$()*+,;=~_?#&[]"


@st.composite
def level_1(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    count = draw(st.integers(min_value=1, max_value=6))
    values = {f"v{i}": draw(SAFE_VALUE) for i in range(count)}
    pieces = [draw(st.text(alphabet=LITERAL, max_size=3))]
    for i in range(count):
        last = i == count - 1
        pieces += [
            f"{{v{i}}}",
            draw(st.text(alphabet=LITERAL, min_size=0 if last else 1, max_size=3)),
        ]
    return "".join(pieces), values


@given(level_1())
@settings(max_examples=400)
def test_level_1_round_trip(case: tuple[str, dict[str, str]]) -> None:
    template, values = case
    t = UriTemplate(template)
    assert t.match(t.expand(values)) == values


# Levels 2-4 (not exploded): whatever values the matcher finds expand to the same URI.
OPERATORS = ["", "+", "#", ".", "/", ";", "?", "&"]
VALUE = st.one_of(st.none(), st.just(""), st.text(alphabet="abz09 \u00e9", min_size=1, max_size=6))


@st.composite
def one_expression(draw: st.DrawFn) -> tuple[str, dict[str, str | None]]:
    op = draw(st.sampled_from(OPERATORS))
    names = draw(st.lists(st.sampled_from("abcd"), min_size=1, max_size=4, unique=True))
    # Unnamed values fill from the left, so a prefix could land on a longer value.
    prefixes = ["", "", ":1", ":3"] if op in (";", "?", "&") else [""]
    specs = [n + draw(st.sampled_from(prefixes)) for n in names]
    values = {n: draw(VALUE) for n in names}
    if op in ("", "+"):  # nothing marks an empty first value, or an empty expression
        values[names[0]] = draw(st.text(alphabet="abz09 \u00e9", min_size=1, max_size=6))
    lead = draw(st.sampled_from(["", "X", "/p"]))
    return lead + "{" + op + ",".join(specs) + "}", values


@given(one_expression())
@settings(max_examples=400)
def test_match_then_expand_is_identity(case: tuple[str, dict[str, str | None]]) -> None:
    template, values = case
    t = UriTemplate(template)
    uri = t.expand(values)
    found = t.match(uri)
    assert found is not None, uri
    assert t.expand(found) == uri


@given(st.sampled_from([t for t, _ in LEVEL_EXAMPLES + SECTION_3_EXAMPLES]), st.text(max_size=40))
@settings(max_examples=400)
def test_match_never_raises(template: str, uri: str) -> None:
    t = UriTemplate(template)
    found, steps = t._match(uri, 65536)
    assert found is None or all(isinstance(v, str) for v in found.values())
    assert steps <= t._step_bound()


def backtracking(
    edges: list[list[tuple[int, str, int, int]]], uri: str
) -> list[tuple[int, int, int]] | None:
    """The matcher's DAG searched the slow, obvious way: depth first, edges in order of
    preference, longest run first, never stopping inside a pct-encoded triplet."""

    def search(v: int, p: int) -> list[tuple[int, int, int]] | None:
        if v == len(edges) - 1:
            return [] if p == len(uri) else None
        for kind, arg, dst, cap in edges[v]:
            if kind == _EPS:
                ends: Sequence[int] = [p]
            elif kind == _LIT:
                ends = [p + len(arg)] if uri.startswith(arg, p) else []
            else:
                r = p
                while r < len(uri) and uri[r] not in arg:
                    r += 1
                ends = range(r, p, -1)
            for q in ends:
                if "%" in uri[max(q - 2, 0) : q]:
                    continue
                rest = search(dst, q)
                if rest is not None:
                    return ([(cap, p, q)] if cap >= 0 else []) + rest
        return None

    return search(0, 0)


@given(
    st.sampled_from(
        [t for t, _ in LEVEL_EXAMPLES + SECTION_3_EXAMPLES] + [t for t, _, _ in MATCHES]
    ),
    st.text(alphabet="ab/.,;=&?#X!%2F", max_size=12),
)
@settings(max_examples=1000)
def test_bit_vectors_agree_with_backtracking(template: str, uri: str) -> None:
    t = UriTemplate(template)
    normal = _normalise(uri)
    if normal is not None:
        assert _run(t._matcher.edges, normal)[0] == backtracking(t._matcher.edges, normal)

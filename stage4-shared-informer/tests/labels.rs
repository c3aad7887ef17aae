//! Label selector strings: the cases of apimachinery's selector_test.go
//! (`TestSelectorParse`, `TestSetSelectorParser`, `TestSelectorMatches`,
//! `TestRequirementSelectorMatching`), rewritten for kube's `Selector`, plus error
//! positions and property tests.

use std::collections::{BTreeMap, BTreeSet};

use kube::core::{Expression, Selector};
use stage4_shared_informer::{
    Found, SelectorError, matches_labels, parse_label_selector,
};

fn parse(s: &str) -> Selector {
    parse_label_selector(s).unwrap_or_else(|err| panic!("{s:?} should parse: {err}"))
}

fn parse_err(s: &str) -> SelectorError {
    match parse_label_selector(s) {
        Ok(selector) => panic!("{s:?} should be rejected, parsed as {selector:?}"),
        Err(err) => err,
    }
}

fn set(values: &[&str]) -> BTreeSet<String> {
    values.iter().map(|v| v.to_string()).collect()
}

fn equal(k: &str, v: &str) -> Expression {
    Expression::Equal(k.into(), v.into())
}

fn not_equal(k: &str, v: &str) -> Expression {
    Expression::NotEqual(k.into(), v.into())
}

fn is_in(k: &str, values: &[&str]) -> Expression {
    Expression::In(k.into(), set(values))
}

fn not_in(k: &str, values: &[&str]) -> Expression {
    Expression::NotIn(k.into(), set(values))
}

fn exists(k: &str) -> Expression {
    Expression::Exists(k.into())
}

fn does_not_exist(k: &str) -> Expression {
    Expression::DoesNotExist(k.into())
}

fn selector(expressions: impl IntoIterator<Item = Expression>) -> Selector {
    expressions.into_iter().collect()
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// One test per requirement form.
mod forms {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn empty_string_selects_everything() {
        let everything = parse("");
        assert!(everything.selects_all());
        assert_eq!(everything, Selector::default());
        assert!(parse(" \t\r\n").selects_all());
    }

    #[test]
    fn equals() {
        assert_eq!(parse("app=web"), selector([equal("app", "web")]));
    }

    #[test]
    fn double_equals_is_equals() {
        assert_eq!(parse("app==web"), selector([equal("app", "web")]));
        // kube has no separate DoubleEquals, so it prints back with a single '='.
        assert_eq!(parse("app==web").to_string(), "app=web");
    }

    #[test]
    fn not_equals() {
        assert_eq!(parse("app!=web"), selector([not_equal("app", "web")]));
    }

    #[test]
    fn in_set() {
        assert_eq!(
            parse("tier in (frontend,backend)"),
            selector([is_in("tier", &["backend", "frontend"])])
        );
        assert_eq!(parse("tier in (a)"), selector([is_in("tier", &["a"])]));
    }

    #[test]
    fn notin_set() {
        assert_eq!(
            parse("tier notin (frontend,backend)"),
            selector([not_in("tier", &["backend", "frontend"])])
        );
    }

    #[test]
    fn exists_form() {
        assert_eq!(parse("app"), selector([exists("app")]));
    }

    #[test]
    fn does_not_exist_form() {
        assert_eq!(parse("!app"), selector([does_not_exist("app")]));
        assert_eq!(parse("! app"), selector([does_not_exist("app")]));
    }

    #[test]
    fn duplicate_values_collapse() {
        assert_eq!(parse("x in (a,b,a)"), selector([is_in("x", &["a", "b"])]));
    }
}

/// Keys with DNS prefixes, empty values, and keywords used as identifiers.
mod keys_and_values {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn dns_prefixed_keys() {
        assert_eq!(
            parse("example.com/app=web"),
            selector([equal("example.com/app", "web")])
        );
        assert_eq!(
            parse("this-is-a-dns.domain.com/key-with-dash"),
            selector([exists("this-is-a-dns.domain.com/key-with-dash")])
        );
        assert_eq!(
            parse("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)"),
            selector([not_in(
                "0.1.2.domain/99",
                &["10.10.100.1", "tick.tack.clock"]
            )])
        );
        assert_eq!(
            parse("app.kubernetes.io/name=My_App.v2"),
            selector([equal("app.kubernetes.io/name", "My_App.v2")])
        );
    }

    #[test]
    fn keys_of_exactly_the_maximum_lengths() {
        let name = "a".repeat(63);
        let prefix = format!("{}.{}", "b".repeat(63), "c".repeat(189)); // 253 bytes
        assert_eq!(prefix.len(), 253);
        let key = format!("{prefix}/{name}");
        assert_eq!(parse(&key), selector([exists(&key)]));
        let value = "v".repeat(63);
        assert_eq!(parse(&format!("k={value}")), selector([equal("k", &value)]));
    }

    #[test]
    fn empty_exact_values() {
        assert_eq!(parse("x="), selector([equal("x", "")]));
        assert_eq!(parse("x= "), selector([equal("x", "")]));
        assert_eq!(parse("x!="), selector([not_equal("x", "")]));
        assert_eq!(parse("x=,z= "), selector([equal("x", ""), equal("z", "")]));
        assert_eq!(parse("x==,y"), selector([equal("x", ""), exists("y")]));
    }

    #[test]
    fn empty_values_in_sets() {
        assert_eq!(parse("x in (abc,)"), selector([is_in("x", &["abc", ""])]));
        assert_eq!(parse("x notin (, a)"), selector([not_in("x", &["", "a"])]));
        assert_eq!(
            parse("x notin (abc,,def)"),
            selector([not_in("x", &["abc", "", "def"])])
        );
        assert_eq!(parse("x in (,)"), selector([is_in("x", &[""])]));
    }

    /// apimachinery accepts `()` as the set holding the empty value (its
    /// TestSetSelectorParser has `"x in ()"` and `"x notin ( )"` as valid); it
    /// is `NewRequirement` with no values at all that it rejects, which the
    /// string syntax cannot express.
    #[test]
    fn empty_parentheses_are_the_empty_value_as_in_kubernetes() {
        assert_eq!(parse("x in ()"), selector([is_in("x", &[""])]));
        assert_eq!(parse("x notin ( )"), selector([not_in("x", &[""])]));
        let sel = parse("x in ()");
        assert!(matches_labels(&sel, Some(&labels(&[("x", "")]))));
        assert!(!matches_labels(&sel, Some(&labels(&[("x", "a")]))));
        assert!(!matches_labels(&sel, None));
    }

    #[test]
    fn keywords_are_identifiers_where_no_operator_is_expected() {
        assert_eq!(
            parse("a in (x,y,notin, z,in)"),
            selector([is_in("a", &["in", "notin", "x", "y", "z"])])
        );
        assert_eq!(parse("notin=in"), selector([equal("notin", "in")]));
        assert_eq!(parse("in in (in)"), selector([is_in("in", &["in"])]));
        assert_eq!(
            parse("in,!notin"),
            selector([exists("in"), does_not_exist("notin")])
        );
    }
}

/// Several requirements, their order, and whitespace.
mod combinations {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn requirements_are_anded_and_sorted_by_key() {
        assert_eq!(
            parse("x=a,y!=b,z in (h,i,j)"),
            selector([
                equal("x", "a"),
                not_equal("y", "b"),
                is_in("z", &["h", "i", "j"]),
            ])
        );
        assert_eq!(
            parse("x notin (abc,,def),bar,z in (),w"),
            selector([
                exists("bar"),
                exists("w"),
                not_in("x", &["abc", "", "def"]),
                is_in("z", &[""]),
            ])
        );
    }

    /// apimachinery's TestDeterministicParse.
    #[test]
    fn parsing_is_deterministic() {
        assert_eq!(parse("x=a,a=x"), parse("a=x,x=a"));
        assert_eq!(parse("x=a,a=x").to_string(), "a=x,x=a");
    }

    #[test]
    fn requirements_on_one_key_keep_their_order() {
        assert_eq!(
            parse("z,x!=b,a,x=a"),
            selector([
                exists("a"),
                not_equal("x", "b"),
                equal("x", "a"),
                exists("z")
            ])
        );
    }

    #[test]
    fn whitespace_around_every_token() {
        let spaced =
            "  x  =  a ,\ty\t!=\tb ,\n z \r\n in\n (\n h ,\ti , j\n)\n , ! w ";
        assert_eq!(
            parse(spaced),
            selector([
                does_not_exist("w"),
                equal("x", "a"),
                not_equal("y", "b"),
                is_in("z", &["h", "i", "j"]),
            ])
        );
        assert_eq!(parse("\rx"), selector([exists("x")]));
        assert_eq!(parse("a "), selector([exists("a")]));
        assert_eq!(parse("foo  in\t (abc)"), selector([is_in("foo", &["abc"])]));
        assert_eq!(parse("x notin\n (abc)"), selector([not_in("x", &["abc"])]));
    }

    /// apimachinery's TestSelectorParse: the good strings print back without their
    /// spaces.
    #[test]
    fn good_strings_print_back() {
        for s in [
            "x=a,y=b,z=c",
            "",
            "x!=a,y=b",
            "x=",
            "x= ",
            "x=,z= ",
            "x= ,z= ",
            "!x",
        ] {
            assert_eq!(parse(s).to_string(), s.replace(' ', ""), "{s:?}");
        }
        assert_eq!(
            parse("x in (abc,def),y notin (jkl),z").to_string(),
            "x in (abc,def),y notin (jkl),z"
        );
    }
}

/// Every class of error, with its position and message. The messages are
/// apimachinery 1.36's (`content.IsLabelKey`, `validation.IsValidLabelValue`):
/// lengths in bytes, and the pattern quoted as `RegexError` quotes it.
mod errors {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn bad_key_character() {
        let err = parse_err("app$=web");
        assert!(
            matches!(&err, SelectorError::InvalidKey { position: 0, key, .. } if key == "app$"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "unable to parse requirement: invalid label key \"app$\" at position 0: name part must \
             consist of alphanumeric characters, '-', '_' or '.', and must start and end with an \
             alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for \
             validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
    }

    #[test]
    fn bad_key_shapes() {
        for (input, key, reason) in [
            ("-app", "-app", "name part must consist of"),
            ("app-", "app-", "name part must consist of"),
            ("/app", "/app", "prefix part must be non-empty"),
            (
                "example.com/",
                "example.com/",
                "name part must be non-empty",
            ),
            (
                "Example.com/app",
                "Example.com/app",
                "prefix part a lowercase RFC 1123 subdomain",
            ),
            (
                "a..b/app",
                "a..b/app",
                "prefix part a lowercase RFC 1123 subdomain",
            ),
            ("a/b/c", "a/b/c", "a valid label key must consist of"),
            ("ключ", "ключ", "name part must consist of"),
        ] {
            match parse_err(input) {
                SelectorError::InvalidKey {
                    key: got,
                    reason: why,
                    ..
                } => {
                    assert_eq!(got, key);
                    assert!(why.starts_with(reason), "{input:?}: {why}");
                }
                other => panic!("{input:?}: expected InvalidKey, got {other:?}"),
            }
        }
    }

    #[test]
    fn key_too_long() {
        let name = "a".repeat(64);
        let err = parse_err(&format!("x=1, {name}"));
        assert_eq!(err.position(), 5);
        assert!(
            err.to_string()
                .ends_with("name part must be no more than 63 bytes"),
            "{err}"
        );
        // apimachinery's TestRequirementConstructor: a 254-byte key breaks the DNS
        // rule.
        let long_prefix = format!("{}/a", "p".repeat(254));
        match parse_err(&long_prefix) {
            SelectorError::InvalidKey { reason, .. } => {
                assert!(
                    reason.contains("prefix part must be no more than 253 bytes")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_value() {
        let err = parse_err("app=we$b");
        assert_eq!(
            err,
            SelectorError::InvalidValue {
                position: 4,
                key: "app".into(),
                value: "we$b".into(),
                reason: "a valid label must be an empty string or consist of alphanumeric \
                         characters, '-', '_' or '.', and must start and end with an alphanumeric \
                         character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for \
                         validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
                    .into(),
            }
        );
        assert!(err.to_string().starts_with(
            "unable to parse requirement: invalid label value \"we$b\" for key \"app\" at position 4: "
        ));
        // In a set, the offending value is the one reported.
        let err = parse_err("tier in (ok, -bad-)");
        assert!(
            matches!(&err, SelectorError::InvalidValue { position: 13, value, .. } if value == "-bad-"),
            "{err:?}"
        );
        // apimachinery's TestSelectorParse bad string "x=a||y=b": '|' is not
        // special, so the value is "a||y", which is invalid.
        assert!(matches!(
            parse_err("x=a||y=b"),
            SelectorError::InvalidValue { .. }
        ));
        assert!(matches!(
            parse_err("x=é"),
            SelectorError::InvalidValue { .. }
        ));
    }

    #[test]
    fn value_too_long() {
        let err = parse_err(&format!("k={}", "v".repeat(64)));
        assert!(
            matches!(&err, SelectorError::InvalidValue { reason, .. } if reason == "must be no more than 63 bytes"),
            "{err:?}"
        );
    }

    #[test]
    fn unclosed_parenthesis() {
        let err = parse_err("x in (a");
        assert_eq!(
            err,
            SelectorError::UnexpectedToken {
                position: 7,
                found: Found::EndOfString,
                expected: "',' or ')'",
            }
        );
        assert_eq!(
            err.to_string(),
            "unable to parse requirement: found end of string at position 7: expected ',' or ')'"
        );
        assert_eq!(
            parse_err("x in (a,").to_string(),
            "unable to parse requirement: found end of string at position 8: expected ',', ')' or an identifier"
        );
        assert_eq!(
            parse_err("a notin(").to_string(),
            "unable to parse requirement: found end of string at position 8: expected ',', ')' or an identifier"
        );
        // A missing comma inside the set.
        assert_eq!(
            parse_err("a in (xyz abc)").to_string(),
            "unable to parse requirement: found 'abc' at position 10: expected ',' or ')'"
        );
        // Something after the set without a comma.
        assert_eq!(
            parse_err("a in (xyz)b notin ()").to_string(),
            "found 'b' at position 10: expected ',' or end of string"
        );
    }

    #[test]
    fn missing_open_parenthesis() {
        assert_eq!(
            parse_err("x in a").to_string(),
            "unable to parse requirement: found 'a' at position 5: expected '('"
        );
        assert_eq!(
            parse_err("x in").to_string(),
            "unable to parse requirement: found end of string at position 4: expected '('"
        );
        assert_eq!(
            parse_err("x in (=)").to_string(),
            "unable to parse requirement: found '=' at position 6: expected ',', ')' or an identifier"
        );
    }

    #[test]
    fn trailing_leading_and_double_commas() {
        assert_eq!(
            parse_err("a in (xyz),").to_string(),
            "found end of string at position 11: expected an identifier after ','"
        );
        assert_eq!(
            parse_err("x=a,").to_string(),
            "found end of string at position 4: expected an identifier after ','"
        );
        assert_eq!(
            parse_err("x,,y").to_string(),
            "found ',' at position 2: expected an identifier after ','"
        );
        assert_eq!(
            parse_err(",x,y").to_string(),
            "found ',' at position 0: expected '!', an identifier, or end of string"
        );
    }

    #[test]
    fn two_operators_in_one_requirement() {
        assert_eq!(
            parse_err("key=a=b"),
            SelectorError::UnexpectedSeparator {
                position: 5,
                found: Found::Token("=".into()),
                expected: "',' or end of string",
            }
        );
        assert_eq!(
            parse_err("key=a=b").to_string(),
            "found '=' at position 5: expected ',' or end of string"
        );
        assert_eq!(
            parse_err("x==a==b").to_string(),
            "found '==' at position 4: expected ',' or end of string"
        );
        // `!key` is complete as soon as its key is read.
        assert_eq!(
            parse_err("!x=a").to_string(),
            "found '=' at position 2: expected ',' or end of string"
        );
    }

    #[test]
    fn missing_or_unknown_operator() {
        assert_eq!(
            parse_err("x nott in (y)").to_string(),
            "unable to parse requirement: found 'nott' at position 2: expected one of '=', '==', '!=', 'in', 'notin'"
        );
        assert_eq!(
            parse_err("a (").to_string(),
            "unable to parse requirement: found '(' at position 2: expected one of '=', '==', '!=', 'in', 'notin'"
        );
        assert_eq!(
            parse_err("x ! y").to_string(),
            "unable to parse requirement: found '!' at position 2: expected one of '=', '==', '!=', 'in', 'notin'"
        );
    }

    #[test]
    fn missing_key() {
        assert_eq!(
            parse_err("(").to_string(),
            "found '(' at position 0: expected '!', an identifier, or end of string"
        );
        assert_eq!(
            parse_err("=a").to_string(),
            "found '=' at position 0: expected '!', an identifier, or end of string"
        );
        assert_eq!(
            parse_err("!").to_string(),
            "unable to parse requirement: found end of string at position 1: expected an identifier"
        );
        assert_eq!(
            parse_err("!!x").to_string(),
            "unable to parse requirement: found '!' at position 1: expected an identifier"
        );
    }

    #[test]
    fn missing_exact_value() {
        assert_eq!(
            parse_err("x=(a)").to_string(),
            "unable to parse requirement: found '(' at position 2: expected a value, ',' or end of string"
        );
    }

    #[test]
    fn greater_and_less_than_are_not_supported() {
        let err = parse_err("replicas>1");
        assert_eq!(
            err,
            SelectorError::UnsupportedOperator {
                position: 8,
                operator: ">".into(),
            }
        );
        assert_eq!(
            err.to_string(),
            "unable to parse requirement: operator '>' at position 8 is not supported: kube's \
             Selector has no greater-than or less-than expression; list the wanted values with \
             'in' instead"
        );
        assert!(matches!(
            parse_err("x<7"),
            SelectorError::UnsupportedOperator { position: 1, .. }
        ));
    }

    #[test]
    fn the_first_error_wins_and_positions_count_bytes() {
        // The key is checked before the operator and the values.
        assert!(matches!(
            parse_err("$ in (a"),
            SelectorError::InvalidKey { .. }
        ));
        // Syntax is checked before values.
        assert!(matches!(
            parse_err("x in ($"),
            SelectorError::UnexpectedToken { position: 7, .. }
        ));
        // Positions are byte offsets: "é" is two bytes.
        assert_eq!(parse_err("é=a,").position(), 0);
        assert_eq!(parse_err("a=é").position(), 2);
        assert_eq!(parse_err("x=é,y in (b").position(), 2);
    }
}

/// apimachinery's TestSelectorMatches and TestRequirementSelectorMatching.
mod matching {
    use super::*;
    use pretty_assertions::assert_eq;

    fn matches(s: &str, pairs: &[(&str, &str)]) -> bool {
        matches_labels(&parse(s), Some(&labels(pairs)))
    }

    #[test]
    fn expected_matches() {
        assert!(matches("", &[("x", "y")]));
        assert!(matches("x=y", &[("x", "y")]));
        assert!(matches("x=y,z=w", &[("x", "y"), ("z", "w")]));
        assert!(matches("x!=y,z!=w", &[("x", "z"), ("z", "a")]));
        assert!(matches("notin=in", &[("notin", "in")]));
        assert!(matches("x", &[("x", "z")]));
        assert!(matches("!x", &[("y", "z")]));
        assert!(matches(
            "x in (foo),y notin (alpha)",
            &[("x", "foo"), ("y", "baz")]
        ));
        assert!(matches("x notin (),y", &[("y", "")]));
        assert!(matches("!x,y", &[("y", "")]));
        assert!(matches("x=", &[("x", "")]));
    }

    #[test]
    fn expected_non_matches() {
        assert!(!matches("x=z", &[]));
        assert!(!matches("x=y", &[("x", "z")]));
        assert!(!matches("x=y,z=w", &[("x", "w"), ("z", "w")]));
        assert!(!matches("x!=y,z!=w", &[("x", "z"), ("z", "w")]));
        assert!(!matches("x", &[("y", "z")]));
        assert!(!matches("!x", &[("x", "z")]));
        assert!(!matches(
            "x in (foo),y in (alpha)",
            &[("x", "foo"), ("y", "baz")]
        ));
        assert!(!matches("x notin (),!y", &[("y", "")]));
        assert!(!matches("x in ()", &[("y", "baz")]));
        assert!(!matches("x=", &[]));
    }

    #[test]
    fn a_label_set() {
        let set = [("foo", "bar"), ("baz", "blah")];
        assert!(matches("foo=bar", &set));
        assert!(matches("baz=blah", &set));
        assert!(matches("foo=bar,baz=blah", &set));
        assert!(!matches("foo=blah", &set));
        assert!(!matches("baz=bar", &set));
        assert!(!matches("foo=bar,foobar=bar,baz=blah", &set));
    }

    #[test]
    fn missing_labels_are_an_empty_map() {
        assert!(matches_labels(&parse(""), None));
        assert!(matches_labels(&parse("!app"), None));
        assert!(matches_labels(&parse("app!=web"), None));
        assert!(matches_labels(&parse("app notin (web)"), None));
        assert!(!matches_labels(&parse("app"), None));
        assert!(!matches_labels(&parse("app=web"), None));
        assert!(!matches_labels(&parse("app in (web)"), None));
        assert_eq!(
            matches_labels(&parse("!app,x!=y"), None),
            matches_labels(&parse("!app,x!=y"), Some(&BTreeMap::new()))
        );
    }
}

/// Generated selectors round-trip through their string form; no input makes the
/// parser panic.
mod properties {
    use super::*;
    use proptest::collection::{btree_set, vec};
    use proptest::prelude::*;

    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            8 => "[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?",
            1 => Just("in".to_string()),
            1 => Just("notin".to_string()),
            1 => Just("a".repeat(63)),
        ]
    }

    fn key() -> impl Strategy<Value = String> {
        let prefix = "[a-z0-9]([-a-z0-9]{0,6}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,6}[a-z0-9])?){0,2}";
        (proptest::option::of(prefix), name()).prop_map(
            |(prefix, name)| match prefix {
                Some(prefix) => format!("{prefix}/{name}"),
                None => name,
            },
        )
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![4 => name(), 1 => Just(String::new())]
    }

    fn expression() -> impl Strategy<Value = Expression> {
        prop_oneof![
            (key(), btree_set(value(), 1..4))
                .prop_map(|(k, v)| Expression::In(k, v)),
            (key(), btree_set(value(), 1..4))
                .prop_map(|(k, v)| Expression::NotIn(k, v)),
            (key(), value()).prop_map(|(k, v)| Expression::Equal(k, v)),
            (key(), value()).prop_map(|(k, v)| Expression::NotEqual(k, v)),
            key().prop_map(Expression::Exists),
            key().prop_map(Expression::DoesNotExist),
        ]
    }

    fn key_of(expression: &Expression) -> &str {
        match expression {
            Expression::In(k, _)
            | Expression::NotIn(k, _)
            | Expression::Equal(k, _)
            | Expression::NotEqual(k, _)
            | Expression::Exists(k)
            | Expression::DoesNotExist(k) => k,
        }
    }

    /// Up to a dozen selector tokens (and near misses) glued together.
    fn token_soup() -> impl Strategy<Value = String> {
        let token = prop_oneof![
            Just("a"),
            Just("b"),
            Just("x.io/k"),
            Just("in"),
            Just("notin"),
            Just("="),
            Just("=="),
            Just("!="),
            Just("!"),
            Just("("),
            Just(")"),
            Just(","),
            Just(" "),
            Just("\t"),
            Just("-"),
            Just("é"),
            Just(">"),
        ];
        vec(token, 0..12).prop_map(|tokens| tokens.concat())
    }

    proptest! {
        /// parse(display(selector)) is the selector, with its requirements sorted by key.
        #[test]
        fn display_then_parse_round_trips(expressions in vec(expression(), 0..6)) {
            let mut sorted = expressions.clone();
            sorted.sort_by(|a, b| key_of(a).cmp(key_of(b)));
            let expected: Selector = sorted.into_iter().collect();
            let printed = selector(expressions).to_string();
            let parsed = parse_label_selector(&printed);
            prop_assert_eq!(parsed, Ok(expected), "printed as {:?}", printed);
        }

        /// Arbitrary strings never panic.
        #[test]
        fn arbitrary_strings_never_panic(input in any::<String>()) {
            let _ = parse_label_selector(&input);
        }
    }

    proptest! {
        // Most token soups are invalid; run enough that a few hundred parse.
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Strings made of selector tokens never panic, errors point inside the input, and
        /// whatever parses prints back to a string that parses to the same selector.
        #[test]
        fn selector_like_strings_never_panic(input in token_soup()) {
            match parse_label_selector(&input) {
                Ok(parsed) => {
                    let printed = parsed.to_string();
                    prop_assert_eq!(
                        parse_label_selector(&printed),
                        Ok(parsed),
                        "printed as {:?}",
                        printed
                    );
                }
                Err(err) => {
                    prop_assert!(err.position() <= input.len());
                    prop_assert!(input.is_char_boundary(err.position()));
                }
            }
        }
    }
}

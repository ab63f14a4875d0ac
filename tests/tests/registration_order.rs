//! Runtime registration: the table depends only on the live set of registrations, never on the
//! order they were made or undone; undoing everything restores the linked table.

use switchyard::ops::{add, mul};
use switchyard::{
    AliasKey, DispatchKey, ErrorKind, OpHandle, Registration, Tensor, register_fallback,
    register_fallthrough,
};
use switchyard_backends as _;

fn custom(_: switchyard::DispatchKeySet, x: &Tensor, _: &Tensor) -> switchyard::Result<Tensor> {
    Ok(x.clone())
}

fn boxed(
    _: &OpHandle,
    _: switchyard::DispatchKeySet,
    stack: &mut switchyard::Stack<'_>,
) -> switchyard::Result<()> {
    let _ = stack.pop();
    Ok(())
}

/// The registrations, by index; each call makes one.
fn register(which: usize) -> Registration {
    match which {
        0 => mul::register(DispatchKey::Custom1, "custom1", custom).unwrap(),
        // `mul` has the library's derivative at `Autograd`: replacing it is declared.
        1 => mul::register_override(AliasKey::Autograd, "autograd", custom).unwrap(),
        2 => register_fallback(DispatchKey::Custom2, "boxed", boxed).unwrap(),
        3 => register_fallthrough(DispatchKey::Custom3).unwrap(),
        4 => mul::handle()
            .register_fallthrough(DispatchKey::Custom4)
            .unwrap(),
        _ => unreachable!(),
    }
}

/// The table without the lines that name where a registration was made (the caller's line
/// differs with the order of calls in this test; the set does not).
fn table() -> String {
    mul::handle()
        .table_dump()
        .lines()
        .map(|line| match line.find("registration_order.rs") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut all = Vec::new();
    for (i, first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, *first);
            all.push(tail);
        }
    }
    all
}

// One test, so that no other test's registrations change `mul`'s table meanwhile.
#[test]
fn tables_depend_on_the_set_not_the_order() {
    let linked = table();
    assert!(linked.contains("Custom1              missing"), "{linked}");

    let all: Vec<usize> = (0..5).collect();
    let mut expected = None;
    let orders = permutations(&all);
    assert_eq!(orders.len(), 120);
    for order in &orders {
        let mut live: Vec<(usize, Registration)> =
            order.iter().map(|&i| (i, register(i))).collect();
        let with_all = table();
        match &expected {
            None => expected = Some(with_all.clone()),
            Some(first) => assert_eq!(&with_all, first, "registration order {order:?}"),
        }
        // Undo in the reverse of another permutation; after each step the table equals the one
        // made by registering just what is left, from scratch.
        let undo_order = &orders[(order[0] * 7 + order[1]) % orders.len()];
        for &undo in undo_order {
            let at = live.iter().position(|(i, _)| *i == undo).unwrap();
            drop(live.remove(at));
            let left: Vec<usize> = live.iter().map(|(i, _)| *i).collect();
            let now = table();
            drop(std::mem::take(&mut live));
            let fresh: Vec<(usize, Registration)> =
                left.iter().map(|&i| (i, register(i))).collect();
            assert_eq!(table(), now, "after undoing {undo} (left: {left:?})");
            live = fresh;
        }
        assert!(live.is_empty());
        assert_eq!(
            table(),
            linked,
            "everything undone restores the linked table"
        );
    }
    let with_all = expected.unwrap();
    assert!(
        with_all.contains("Custom1              [kernel]"),
        "{with_all}"
    );
    assert!(
        with_all.contains("AutogradCpu          [autograd alias]"),
        "{with_all}"
    );
    assert!(
        with_all.contains("Custom2              [fallback]"),
        "{with_all}"
    );
    assert!(
        with_all.contains("Custom3              fallthrough"),
        "{with_all}"
    );
    assert!(
        with_all.contains("Custom4              fallthrough"),
        "{with_all}"
    );
}

#[test]
fn a_second_kernel_for_one_key_is_refused_and_names_both() {
    let first = add::register(DispatchKey::PrivateUse3, "first", custom).unwrap();
    let err = add::register(DispatchKey::PrivateUse3, "second", custom).unwrap_err();
    let ErrorKind::DuplicateKernel {
        first: a,
        second: b,
        ..
    } = err.kind()
    else {
        panic!("{err}");
    };
    assert_eq!((a.0, b.0), ("first", "second"), "{err}");
    let text = err.to_string();
    assert!(text.contains("registration_order.rs:"), "{text}");
    // Refused means unchanged: the first still serves, and dropping it restores the table.
    assert!(add::handle().table_dump().contains("first"));
    drop(first);
    assert!(!add::handle().table_dump().contains("first"));
    // Linked kernels count too. (`add`, not `mul`: the test above owns `mul`'s table.)
    let err = add::register(DispatchKey::CpuNaive, "again", custom).unwrap_err();
    assert!(err.to_string().contains("add_naive"), "{err}");
}

/// A linked fallback at a user key: present in every table this file compares, linked and live.
#[switchyard::fallback(key = Mode3)]
fn linked_mode3(
    op: &switchyard::OpHandle,
    keys: switchyard::DispatchKeySet,
    stack: &mut switchyard::Stack<'_>,
) -> Result<(), switchyard::DispatchError> {
    op.redispatch_boxed(keys.below(DispatchKey::Mode3), stack)
}

#[test]
fn a_second_fallback_for_one_key_is_refused_and_names_both() {
    let err = register_fallback(DispatchKey::Mode3, "mine", boxed).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::DuplicateFallback {
                key: DispatchKey::Mode3,
                ..
            }
        ),
        "{text}"
    );
    assert!(
        text.contains("linked_mode3") && text.contains("mine"),
        "{text}"
    );
}

#[test]
fn the_librarys_own_keys_are_refused() {
    for key in [DispatchKey::BuiltinTrace, DispatchKey::BuiltinProfile] {
        let err = register_fallback(key, "mine", boxed).unwrap_err();
        assert!(err.to_string().contains("the library's own key"), "{err}");
    }
}

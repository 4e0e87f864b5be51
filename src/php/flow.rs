//! The `$children` of `RedisLock\Queue::enqueue()`, read into the tasks of
//! a workflow (`queue::flow`).

use std::sync::Arc;

use ext_php_rs::types::{ZendHashTable, Zval};

use super::queue::Queue;
use super::value::{Value, non_empty, quoted, type_error, value_error};
use crate::queue::{self, flow::OnChildFailure};

/// The most tasks one flow creates, its parent included (one script).
pub const MOST_TASKS: usize = 10_000;
/// The most levels of children under a parent.
pub const DEEPEST: usize = 100;

const M: &str = "RedisLock\\Queue::enqueue()";

/// One task of a flow, as read.
pub struct Spec {
    pub queue: Arc<queue::Queue>,
    pub id: Vec<u8>,
    pub payload: Option<Vec<u8>>,
    /// Its parent's index in the list (None: the root).
    pub parent: Option<usize>,
    pub on_failure: OnChildFailure,
}

/// The policy `value` names (null: 'fail'), for the parameter `param`.
pub fn policy(value: &Value, param: &str) -> ext_php_rs::prelude::PhpResult<OnChildFailure> {
    match value {
        Value::Null => Ok(OnChildFailure::Fail),
        v => {
            let name = v.bytes(param)?;
            std::str::from_utf8(&name)
                .ok()
                .and_then(OnChildFailure::named)
                .ok_or_else(|| {
                    value_error(format!(
                        "{param} must be 'fail', 'ignore' or 'continue', {} given",
                        quoted(&name)
                    ))
                })
        }
    }
}

/// Adds the children `children` of the task at `parent` to `specs`
/// (`path`: where they are in the argument, for errors), `client_of` the
/// queue named by a string.
pub fn read(
    children: &ZendHashTable,
    parent: usize,
    path: &str,
    depth: usize,
    named: &dyn Fn(&[u8]) -> Arc<queue::Queue>,
    specs: &mut Vec<Spec>,
) -> ext_php_rs::prelude::PhpResult<()> {
    if depth > DEEPEST {
        return Err(value_error(format!(
            "{M}: {path} nests children more than {DEEPEST} levels deep"
        )));
    }
    for (i, (key, zv)) in super::value::entries(children).enumerate() {
        let at = format!("{path}[{}]", shown_key(&key, i));
        let Some(child) = zv.array() else {
            return Err(type_error(format!(
                "{M}: {at} must be of type array (with 'queue' and 'id'), {} given",
                Value::copy_of(zv).type_name()
            )));
        };
        if specs.len() >= MOST_TASKS {
            return Err(value_error(format!(
                "{M}: a flow creates at most {MOST_TASKS} tasks, its parent included"
            )));
        }
        for (k, _) in super::value::entries(child) {
            let known = matches!(
                &*k.bytes(),
                b"queue" | b"id" | b"payload" | b"children" | b"onChildFailure"
            );
            if !known {
                return Err(value_error(format!(
                    "{M}: {at} has the key {}: a child takes 'queue', 'id', 'payload', 'children' and 'onChildFailure'",
                    shown_key(&k, 0)
                )));
            }
        }
        let queue = match child.get("queue") {
            Some(q) => queue_of(q, &format!("{at}['queue']"), named)?,
            None => return Err(value_error(format!("{M}: {at} has no 'queue'"))),
        };
        let id_param = format!("{M}: {at}['id']");
        let id = match child.get("id") {
            Some(id) => non_empty(&Value::copy_of(id), id_param.as_str())?,
            None => return Err(value_error(format!("{M}: {at} has no 'id'"))),
        };
        let payload_param = format!("{M}: {at}['payload']");
        let payload = match child.get("payload").map(Value::copy_of) {
            None | Some(Value::Null) => None,
            Some(p) => Some(p.bytes(payload_param.as_str())?),
        };
        let policy_param = format!("{M}: {at}['onChildFailure']");
        let grandchildren = child.get("children").map(|g| (g, g.array()));
        let on_failure = match child.get("onChildFailure").map(Value::copy_of) {
            None => OnChildFailure::Fail,
            Some(v) => {
                if grandchildren.is_none() {
                    return Err(value_error(format!(
                        "{policy_param} is for a child with 'children'"
                    )));
                }
                policy(&v, &policy_param)?
            }
        };
        if let Some(same) = specs
            .iter()
            .find(|s| s.queue.name() == queue.name() && s.id == id)
        {
            return Err(value_error(format!(
                "{M}: {at} is task {} of queue '{}' a second time in the flow",
                quoted(&same.id),
                super::value::escaped(queue.name())
            )));
        }
        specs.push(Spec {
            queue,
            id,
            payload,
            parent: Some(parent),
            on_failure,
        });
        let me = specs.len() - 1;
        match grandchildren {
            None => {}
            Some((_, Some(list))) if !list.is_empty() => {
                read(
                    list,
                    me,
                    &format!("{at}['children']"),
                    depth + 1,
                    named,
                    specs,
                )?;
            }
            Some((_, Some(_))) => {}
            Some((g, None)) => {
                return Err(type_error(format!(
                    "{M}: {at}['children'] must be of type array, {} given",
                    Value::copy_of(g).type_name()
                )));
            }
        }
    }
    Ok(())
}

/// The queue `value` names: a `RedisLock\Queue`, or the name of one.
fn queue_of(
    value: &Zval,
    param: &str,
    named: &dyn Fn(&[u8]) -> Arc<queue::Queue>,
) -> ext_php_rs::prelude::PhpResult<Arc<queue::Queue>> {
    if let Some(q) = value.extract::<&Queue>() {
        return Ok(q.shared());
    }
    match Value::copy_of(value) {
        v @ (Value::Str(_) | Value::Stringable(..)) => Ok(named(&non_empty(&v, param)?)),
        v => Err(type_error(format!(
            "{M}: {param} must be of type RedisLock\\Queue|string, {} given",
            v.type_name()
        ))),
    }
}

fn shown_key(key: &super::value::Key, _: usize) -> String {
    match key {
        super::value::Key::Int(n) => n.to_string(),
        super::value::Key::Str(s) => format!("'{}'", super::value::escaped(s)),
    }
}

//! Loads a clipfold plug-in with nothing but the `extism` crate and WASI,
//! provides the three host functions of docs/spec.md#host-functions scripted from
//! harness/sdks/cases.json, and checks the cases there.
//!
//! Usage: clipfold-sdk-check CASES_JSON WASM
//!
//! Output (harness/sdks/README.md): "sdk NAME VERSION", then "ok CASE" or
//! "FAIL CASE: why" per case. Exit status 1 when any case failed.

use extism::{host_fn, Manifest, PluginBuilder, UserData, Wasm, PTR};
use serde_json::{json, Value};
use std::time::Duration;

/// What the plug-in sent to each host function, and the script of the
/// case being run.
#[derive(Default)]
struct Host {
    script: Value,
    llm: Vec<Value>,
    list: Vec<Value>,
    commits: Vec<Value>,
}

fn parse(input: &str) -> Value {
    serde_json::from_str(input).unwrap_or(Value::Null)
}

host_fn!(llm_complete(host: Host; input: String) -> String {
    let delay = {
        let h = host.get()?;
        let mut h = h.lock().unwrap();
        h.llm.push(parse(&input));
        h.script["llm_delay_ms"].as_u64().unwrap_or(0)
    };
    std::thread::sleep(Duration::from_millis(delay));
    let h = host.get()?;
    let h = h.lock().unwrap();
    Ok(h.script["llm_complete"].to_string())
});

host_fn!(memory_list(host: Host; input: String) -> String {
    let h = host.get()?;
    let mut h = h.lock().unwrap();
    h.list.push(parse(&input));
    Ok(h.script["memory_list"].to_string())
});

host_fn!(compaction_commit(host: Host; input: String) -> String {
    let h = host.get()?;
    let mut h = h.lock().unwrap();
    h.commits.push(parse(&input));
    Ok(h.script["compaction_commit"].to_string())
});

type Check = Result<(), String>;

fn same(what: &str, got: &Value, want: &Value) -> Check {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got}, want {want}"))
    }
}

fn ids(list: &Value) -> Value {
    Value::Array(
        list.as_array()
            .map(|l| l.iter().map(|m| m["id"].clone()).collect())
            .unwrap_or_default(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: clipfold-sdk-check CASES_JSON WASM");
        std::process::exit(2);
    }
    let cases: Value = match std::fs::read_to_string(&args[1])
        .map_err(|e| e.to_string())
        .and_then(|s| serde_json::from_str(&s).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("cases: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "sdk extism (crate) {}",
        extism::extism_version().trim_end_matches('\0')
    );

    let host = UserData::new(Host::default());
    const NS: &str = "extism:host/user";
    let built = PluginBuilder::new(Manifest::new([Wasm::file(&args[2])]))
        // WASI through wasmtime-wasi, which has real clocks (there is no
        // clock option).
        .with_wasi(true)
        .with_function_in_namespace(NS, "llm_complete", [PTR], [PTR], host.clone(), llm_complete)
        .with_function_in_namespace(NS, "memory_list", [PTR], [PTR], host.clone(), memory_list)
        .with_function_in_namespace(
            NS,
            "compaction_commit",
            [PTR],
            [PTR],
            host.clone(),
            compaction_commit,
        )
        .build();
    let mut plugin = match built {
        Ok(p) => p,
        Err(e) => {
            println!("FAIL load: {e:#}");
            std::process::exit(1);
        }
    };

    let state = host.get().expect("host state");
    let mut call = |c: &Value| -> Result<Value, String> {
        {
            let mut h = state.lock().unwrap();
            *h = Host {
                script: c["host"].clone(),
                ..Host::default()
            };
        }
        let export = c["export"].as_str().unwrap_or_default();
        let out = plugin
            .call::<String, String>(export, c["input"].to_string())
            .map_err(|e| format!("{e:#}"))?;
        serde_json::from_str(&out).map_err(|e| format!("output is not JSON: {e}"))
    };
    let recorded = |f: fn(&Host) -> &Vec<Value>| -> Vec<Value> {
        let h = host.get().unwrap();
        let h = h.lock().unwrap();
        f(&h).clone()
    };

    let mut failed = 0;
    let mut report = |name: &str, r: Check| match r {
        Ok(()) => println!("ok {name}"),
        Err(e) => {
            failed += 1;
            println!("FAIL {name}: {e}");
        }
    };

    // split
    let c = &cases["split"];
    report(
        "split",
        (|| {
            let res = call(c)?;
            let e = &c["expect"];
            same(
                "to_compress ids",
                &ids(&res["to_compress"]),
                &e["to_compress"],
            )?;
            same("to_keep ids", &ids(&res["to_keep"]), &e["to_keep"])?;
            same("prior_summary", &res["prior_summary"], &e["prior_summary"])
        })(),
    );

    // compress
    let c = &cases["compress"];
    let r = call(c).and_then(|res| {
        let e = &c["expect"];
        let (llm, list, commits) = (
            recorded(|h| &h.llm),
            recorded(|h| &h.list),
            recorded(|h| &h.commits),
        );
        same("failed", &res["failed"], &e["failed"])?;
        same(
            "messages_compressed",
            &res["messages_compressed"],
            &e["messages_compressed"],
        )?;
        same(
            "batches_created",
            &res["batches_created"],
            &e["batches_created"],
        )?;
        same("llm_calls", &res["llm_calls"], &e["llm_calls"])?;
        same("llm_complete calls", &json!(llm.len()), &e["llm_calls"])?;
        same(
            "compaction_commit calls",
            &json!(commits.len()),
            &e["commits"],
        )?;
        same("memory_list calls", &json!(list.len()), &json!(1))?;
        same(
            "memory_list label_prefix",
            &list[0]["label_prefix"],
            &e["label_prefix"],
        )?;
        let hist = res["history"].as_array().cloned().unwrap_or_default();
        let first = hist.first().ok_or("history is empty")?;
        let content = first["content"].as_str().unwrap_or_default();
        let prefix = e["archive_prefix"].as_str().unwrap_or_default();
        let summary = c["host"]["llm_complete"]["content"][0]["text"]
            .as_str()
            .unwrap_or("\0");
        same("history[0].role", &first["role"], &json!("system"))?;
        if !content.starts_with(prefix) {
            return Err(format!(
                "history[0].content starts {:?}, want {prefix:?}",
                content
                    .chars()
                    .take(prefix.chars().count() + 10)
                    .collect::<String>()
            ));
        }
        if !content.contains(summary) {
            return Err("history[0].content does not hold the LLM's summary".into());
        }
        same(
            "kept ids",
            &ids(&Value::Array(hist[1..].to_vec())),
            &e["kept_ids"],
        )?;
        let commit = &commits[0];
        let mut removed: Vec<String> = commit["remove_message_ids"]
            .as_array()
            .map(|l| {
                l.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        removed.sort();
        same(
            "commit conversation_id",
            &commit["conversation_id"],
            &e["conversation_id"],
        )?;
        same(
            "commit remove_message_ids (sorted)",
            &json!(removed),
            &e["removed_ids"],
        )?;
        same(
            "commit operation_id",
            &commit["operation_id"],
            &res["operation_id"],
        )?;
        same(
            "commit insert_message.content",
            &commit["insert_message"]["content"],
            &first["content"],
        )?;
        same(
            "commit archive_writes",
            &json!(commit["archive_writes"].as_array().map(|a| a.len())),
            &json!(1),
        )
    });
    report("compress", r);

    // invalid
    let c = &cases["invalid"];
    let prefix = c["error_prefix"].as_str().unwrap_or_default();
    let r = match call(c) {
        Ok(res) => Err(format!(
            "succeeded with {res}, want an error starting {prefix:?}"
        )),
        Err(msg) if msg.starts_with(prefix) => Ok(()),
        Err(msg) => Err(format!("error {msg:?}, want one starting {prefix:?}")),
    };
    report("invalid", r);

    // deadline
    let c = &cases["deadline"];
    let r = call(c).and_then(|res| {
        let e = &c["expect"];
        same("failed", &res["failed"], &e["failed"])?;
        same("failure_code", &res["failure_code"], &e["failure_code"])?;
        same("history ids", &ids(&res["history"]), &e["history_ids"])?;
        same(
            "llm_complete calls",
            &json!(recorded(|h| &h.llm).len()),
            &e["llm_calls"],
        )?;
        same(
            "compaction_commit calls",
            &json!(recorded(|h| &h.commits).len()),
            &e["commits"],
        )
    });
    report("deadline", r);

    if failed > 0 {
        std::process::exit(1);
    }
}

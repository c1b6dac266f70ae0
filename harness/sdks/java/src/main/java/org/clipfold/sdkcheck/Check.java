package org.clipfold.sdkcheck;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.dylibso.chicory.wasi.WasiOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.extism.sdk.chicory.ExtismFunction;
import org.extism.sdk.chicory.ExtismFunctionException;
import org.extism.sdk.chicory.ExtismHostFunction;
import org.extism.sdk.chicory.ExtismValType;
import org.extism.sdk.chicory.Manifest;
import org.extism.sdk.chicory.ManifestWasm;
import org.extism.sdk.chicory.Plugin;

/**
 * Loads a clipfold plug-in with nothing but the Extism Chicory SDK
 * (org.extism.sdk:chicory-sdk-core) and WASI, provides the three host
 * functions of docs/spec.md#host-functions scripted from harness/sdks/cases.json, and checks
 * the cases there.
 *
 * <p>Usage: {@code java -cp … org.clipfold.sdkcheck.Check CASES_JSON WASM}
 *
 * <p>Output (harness/sdks/README.md): "sdk NAME VERSION", then "ok CASE"
 * or "FAIL CASE: why" per case. Exit status 1 when any case failed.
 */
public final class Check {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NS = "extism:host/user";

    /** What the plug-in sent to each host function, and the script of the case being run. */
    static final class Host {
        JsonNode script = JsonNodeFactory.instance.objectNode();
        final List<JsonNode> llm = new ArrayList<>();
        final List<JsonNode> list = new ArrayList<>();
        final List<JsonNode> commits = new ArrayList<>();
    }

    static final class CheckError extends Exception {
        private static final long serialVersionUID = 1L;

        CheckError(String message) {
            super(message);
        }
    }

    @FunctionalInterface
    interface Answer {
        JsonNode answer(JsonNode input) throws Exception;
    }

    private final Host host = new Host();
    private final Plugin plugin;

    private Check(Path wasm) {
        ExtismHostFunction[] functions = {
            fn("llm_complete", host.llm, in -> {
                Thread.sleep(host.script.path("llm_delay_ms").asLong(0));
                return host.script.get("llm_complete");
            }),
            fn("memory_list", host.list, in -> host.script.get("memory_list")),
            fn("compaction_commit", host.commits, in -> host.script.get("compaction_commit")),
        };
        Manifest manifest = Manifest.ofWasms(ManifestWasm.fromFilePath(wasm).build())
                .withOptions(new Manifest.Options()
                        // WASI preview 1 from Chicory, with the real
                        // wall clock (its monotonic clock is System.nanoTime).
                        .withWasi(WasiOptions.builder().withClock(Clock.systemUTC()).build()))
                .build();
        this.plugin = Plugin.ofManifest(manifest).withHostFunctions(functions).build();
    }

    /** A host function: reads the JSON input, records it, answers from the script. */
    private static ExtismHostFunction fn(String name, List<JsonNode> record, Answer answer) {
        ExtismFunction f = (cp, args, returns) -> {
            byte[] out;
            try {
                JsonNode in = JSON.readTree(cp.memory().readBytes(args.getRaw(0)));
                record.add(in);
                out = JSON.writeValueAsBytes(answer.answer(in));
            } catch (Exception e) {
                out = ("{\"error\":{\"code\":\"other\",\"message\":" + JsonNodeFactory.instance.textNode("host: " + e)
                        + ",\"retryable\":false}}").getBytes(StandardCharsets.UTF_8);
            }
            returns.setRaw(0, cp.memory().writeBytes(out));
        };
        return ExtismHostFunction.of(NS, name, f, List.of(ExtismValType.I64), List.of(ExtismValType.I64));
    }

    private JsonNode call(JsonNode c) throws IOException {
        host.script = c.path("host");
        host.llm.clear();
        host.list.clear();
        host.commits.clear();
        byte[] out = plugin.call(c.get("export").asText(), JSON.writeValueAsBytes(c.get("input")));
        return JSON.readTree(out);
    }

    private static void same(String what, Object got, Object want) throws CheckError {
        if (!java.util.Objects.equals(got, want)) {
            throw new CheckError(what + ": got " + got + ", want " + want);
        }
    }

    private static ArrayNode ids(JsonNode list) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (JsonNode m : list) {
            out.add(m.get("id"));
        }
        return out;
    }

    private void split(JsonNode c) throws Exception {
        JsonNode res = call(c);
        JsonNode e = c.get("expect");
        same("to_compress ids", ids(res.path("to_compress")), e.get("to_compress"));
        same("to_keep ids", ids(res.path("to_keep")), e.get("to_keep"));
        same("prior_summary", res.get("prior_summary"), e.get("prior_summary"));
    }

    private void compress(JsonNode c) throws Exception {
        JsonNode res = call(c);
        JsonNode e = c.get("expect");
        same("failed", res.get("failed"), e.get("failed"));
        same("messages_compressed", res.get("messages_compressed"), e.get("messages_compressed"));
        same("batches_created", res.get("batches_created"), e.get("batches_created"));
        same("llm_calls", res.get("llm_calls"), e.get("llm_calls"));
        same("llm_complete calls", host.llm.size(), e.get("llm_calls").asInt());
        same("compaction_commit calls", host.commits.size(), e.get("commits").asInt());
        same("memory_list calls", host.list.size(), 1);
        same("memory_list label_prefix", host.list.get(0).get("label_prefix"), e.get("label_prefix"));
        JsonNode hist = res.path("history");
        JsonNode first = hist.path(0);
        String content = first.path("content").asText();
        String prefix = e.get("archive_prefix").asText();
        String summary = c.at("/host/llm_complete/content/0/text").asText();
        same("history[0].role", first.path("role").asText(), "system");
        if (!content.startsWith(prefix)) {
            throw new CheckError("history[0].content starts " + JsonNodeFactory.instance.textNode(
                    content.substring(0, Math.min(content.length(), prefix.length() + 10))) + ", want " + prefix);
        }
        if (!content.contains(summary)) {
            throw new CheckError("history[0].content does not hold the LLM's summary");
        }
        ArrayNode kept = JsonNodeFactory.instance.arrayNode();
        for (int i = 1; i < hist.size(); i++) {
            kept.add(hist.get(i));
        }
        same("kept ids", ids(kept), e.get("kept_ids"));
        JsonNode commit = host.commits.get(0);
        List<String> removed = new ArrayList<>();
        commit.path("remove_message_ids").forEach(id -> removed.add(id.asText()));
        removed.sort(null);
        List<String> want = new ArrayList<>();
        e.get("removed_ids").forEach(id -> want.add(id.asText()));
        same("commit conversation_id", commit.get("conversation_id"), e.get("conversation_id"));
        same("commit remove_message_ids (sorted)", removed, want);
        same("commit operation_id", commit.get("operation_id"), res.get("operation_id"));
        same("commit insert_message.content", commit.at("/insert_message/content").asText(), content);
        same("commit archive_writes", commit.path("archive_writes").size(), 1);
    }

    private void invalid(JsonNode c) throws Exception {
        String prefix = c.get("error_prefix").asText();
        JsonNode res;
        try {
            res = call(c);
        } catch (ExtismFunctionException err) {
            // getMessage() is "function NAME returned an error: …";
            // getError() is the plug-in's error string itself.
            if (!err.getError().startsWith(prefix)) {
                throw new CheckError("error " + JsonNodeFactory.instance.textNode(err.getError())
                        + ", want one starting " + prefix);
            }
            return;
        }
        throw new CheckError("succeeded with " + res + ", want an error starting " + prefix);
    }

    private void deadline(JsonNode c) throws Exception {
        JsonNode res = call(c);
        JsonNode e = c.get("expect");
        same("failed", res.get("failed"), e.get("failed"));
        same("failure_code", res.get("failure_code"), e.get("failure_code"));
        same("history ids", ids(res.path("history")), e.get("history_ids"));
        same("llm_complete calls", host.llm.size(), e.get("llm_calls").asInt());
        same("compaction_commit calls", host.commits.size(), e.get("commits").asInt());
    }

    /** The SDK's version, from the pom.properties Maven puts in its jar. */
    static String sdkVersion() {
        String res = "/META-INF/maven/org.extism.sdk/chicory-sdk-core/pom.properties";
        try (InputStream in = Plugin.class.getResourceAsStream(res)) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    @FunctionalInterface
    interface CaseCheck {
        void run(JsonNode c) throws Exception;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: Check CASES_JSON WASM");
            System.exit(2);
        }
        JsonNode cases = JSON.readTree(Path.of(args[0]).toFile());
        System.out.println("sdk org.extism.sdk:chicory-sdk-core " + sdkVersion());
        Check check;
        try {
            check = new Check(Path.of(args[1]));
        } catch (RuntimeException e) {
            System.out.println("FAIL load: " + e);
            System.exit(1);
            return;
        }
        Map<String, CaseCheck> checks = new LinkedHashMap<>();
        checks.put("split", check::split);
        checks.put("compress", check::compress);
        checks.put("invalid", check::invalid);
        checks.put("deadline", check::deadline);
        int failed = 0;
        for (Map.Entry<String, CaseCheck> entry : checks.entrySet()) {
            try {
                entry.getValue().run(cases.get(entry.getKey()));
                System.out.println("ok " + entry.getKey());
            } catch (CheckError e) {
                failed++;
                System.out.println("FAIL " + entry.getKey() + ": " + e.getMessage());
            } catch (Exception | StackOverflowError e) {
                failed++;
                System.out.println("FAIL " + entry.getKey() + ": " + e);
            }
        }
        System.exit(failed > 0 ? 1 : 0);
    }
}

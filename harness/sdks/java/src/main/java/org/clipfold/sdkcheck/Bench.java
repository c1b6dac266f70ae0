package org.clipfold.sdkcheck;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.dylibso.chicory.wasi.WasiOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import org.extism.sdk.chicory.ExtismFunction;
import org.extism.sdk.chicory.ExtismHostFunction;
import org.extism.sdk.chicory.ExtismValType;
import org.extism.sdk.chicory.Manifest;
import org.extism.sdk.chicory.ManifestWasm;
import org.extism.sdk.chicory.Plugin;

/**
 * Times {@code split} through nothing but the Extism Chicory SDK (no
 * staging: input and output cross the SDK's kernel 8 bytes per call), as
 * for any Java user who loads the plug-in. tools/benchreport runs it for
 * docs/benchmarks.md ("split through a plain Extism SDK").
 *
 * <p>Usage: {@code java -cp … org.clipfold.sdkcheck.Bench [--aot] [--warmup=N] WASM INPUTS_DIR SIZES [RUNS]}.
 * {@code --aot} compiles the module to JVM bytecode when it loads
 * ({@code Manifest.Options.withAoT()}, Chicory's compiler); without it
 * Chicory interprets, its default. INPUTS_DIR holds history-N.json
 * (written by tools/benchreport from internal/benchdata); SIZES is a
 * comma list of N; RUNS timed calls per size (default 11), after N
 * untimed ones (default 5: the JVM compiles hot code as it runs, as it
 * would for a host calling on every turn). Prints JSON:
 * {"sdk", "version", "aot", "calls": [{"export", "messages", "median_ms",
 * "min_ms", "runs"}]}.
 */
public final class Bench {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] argv) throws Exception {
        List<String> args = new java.util.ArrayList<>(Arrays.asList(argv));
        boolean aot = args.remove("--aot");
        int warmup = 5;
        for (String a : List.copyOf(args)) {
            if (a.startsWith("--warmup=")) {
                warmup = Integer.parseInt(a.substring("--warmup=".length()));
                args.remove(a);
            }
        }
        if (args.size() < 3 || args.size() > 4) {
            System.err.println("usage: Bench [--aot] [--warmup=N] WASM INPUTS_DIR SIZES [RUNS]");
            System.exit(2);
        }
        int runs = args.size() == 4 ? Integer.parseInt(args.get(3)) : 11;
        // split calls no host function; the plug-in imports three, so they exist.
        ExtismFunction unused = (cp, a, returns) -> returns.setRaw(0, cp.memory().writeBytes(
                "{\"error\":{\"code\":\"other\",\"message\":\"not used by split\",\"retryable\":false}}"
                        .getBytes(StandardCharsets.UTF_8)));
        ExtismHostFunction[] functions = new ExtismHostFunction[3];
        String[] names = {"llm_complete", "memory_list", "compaction_commit"};
        for (int i = 0; i < 3; i++) {
            functions[i] = ExtismHostFunction.of("extism:host/user", names[i], unused,
                    List.of(ExtismValType.I64), List.of(ExtismValType.I64));
        }
        Manifest.Options options = new Manifest.Options()
                .withWasi(WasiOptions.builder().withClock(Clock.systemUTC()).build());
        if (aot) {
            options = options.withAoT();
        }
        Manifest manifest = Manifest.ofWasms(ManifestWasm.fromFilePath(Path.of(args.get(0))).build())
                .withOptions(options).build();
        Plugin plugin = Plugin.ofManifest(manifest).withHostFunctions(functions).build();

        ObjectNode out = JSON.createObjectNode();
        out.put("sdk", "org.extism.sdk:chicory-sdk-core");
        out.put("version", Check.sdkVersion());
        out.put("aot", aot);
        out.put("java", System.getProperty("java.version"));
        ArrayNode calls = out.putArray("calls");
        for (String size : args.get(2).split(",")) {
            int n = Integer.parseInt(size);
            byte[] input = Files.readAllBytes(Path.of(args.get(1), "history-" + n + ".json"));
            for (int i = 0; i < warmup; i++) {
                plugin.call("split", input);
            }
            double[] ms = new double[runs];
            for (int i = 0; i < runs; i++) {
                long t0 = System.nanoTime();
                byte[] res = plugin.call("split", input);
                ms[i] = (System.nanoTime() - t0) / 1e6;
                JsonNode r = JSON.readTree(res);
                int got = r.path("to_compress").size() + r.path("to_keep").size();
                if (got != n) {
                    throw new IllegalStateException("split of " + n + ": " + got + " messages back");
                }
            }
            Arrays.sort(ms);
            ObjectNode c = calls.addObject();
            c.put("export", "split");
            c.put("messages", n);
            c.put("median_ms", ms[runs / 2]);
            c.put("min_ms", ms[0]);
            c.put("runs", runs);
            c.put("warmup", warmup);
        }
        System.out.println(JSON.writeValueAsString(out));
    }
}

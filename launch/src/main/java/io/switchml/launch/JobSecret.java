package io.switchml.launch;

import io.switchml.client.SwitchMLConfig;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The secret a launcher gives every job it starts (docs/security.md, "Job secrets"): the switch binds
 * a job to the secret its first rank presents, so a stranger who takes a seat first makes the real
 * ranks fail loudly instead of running with them, and one who comes later is refused. The launcher
 * makes a fresh one per job unless the user's settings name one, and hands it to its worker
 * processes in their environment ({@code SWITCHML_JOB_SECRET}, readable by the same user only), never on a
 * command line, which every user of the host can read.
 */
public final class JobSecret {
    /** Where a worker process finds the secret its launcher made. */
    public static final String VARIABLE = SwitchMLConfig.Key.JOB_SECRET.environmentVariable();
    /** Where a user's environment names a file holding the secret instead. */
    public static final String FILE_VARIABLE = SwitchMLConfig.Key.JOB_SECRET_FILE.environmentVariable();
    private static final SecureRandom RANDOM = new SecureRandom();

    private JobSecret() {
    }

    /** 32 random bytes, URL-safe base64: 43 printable characters, what the switch takes as a secret. */
    public static String fresh() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** Whether {@code settings} ({@code switchml.*} properties) name the job's secret themselves. */
    public static boolean named(Map<String, String> settings) {
        return !settings.getOrDefault(SwitchMLConfig.Key.JOB_SECRET.property(), "").isEmpty()
                || !settings.getOrDefault(SwitchMLConfig.Key.JOB_SECRET_FILE.property(), "").isEmpty();
    }

    /**
     * The launcher's side: the environment to give the worker processes of a job configured by
     * {@code settings}, with a fresh secret in it unless the settings name one.
     */
    public static Map<String, String> forWorkers(Map<String, String> settings) {
        return named(settings) ? Map.of() : Map.of(VARIABLE, fresh());
    }

    /**
     * The settings with a secret in them: {@code settings} as they are when they name one, else with the
     * secret the launcher put in {@code environment}, if any (a worker started by hand runs without).
     */
    public static Map<String, String> withLauncherSecret(Map<String, String> settings, Map<String, String> environment) {
        String secret = environment.get(VARIABLE);
        if (named(settings) || secret == null || secret.isBlank()) {
            return settings;
        }
        Map<String, String> with = new LinkedHashMap<>(settings);
        with.put(SwitchMLConfig.Key.JOB_SECRET.property(), secret.trim());
        return with;
    }
}

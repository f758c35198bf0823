package io.switchml.udp;

import java.util.Locale;

/**
 * Whether a UDP offload is used (the settings {@code udpSegmentation} and {@code udpGro} of both sides): {@code auto}
 * where the host has it, {@code on} required (an error where the host lacks it), {@code off} never.
 */
public enum Offload {
    AUTO, ON, OFF;

    /** The spellings the settings take, for help texts. */
    public static final String CHOICES = "auto|on|off";

    /**
     * Parses a setting's value, {@code auto}, {@code on} or {@code off} in any case ({@code true} and {@code false}
     * as on and off, for configurations written before {@code auto} existed).
     *
     * @throws IllegalArgumentException naming the setting and what it takes, for any other value
     */
    public static Offload parse(String setting, String value) {
        return switch (value == null ? "" : value.trim().toLowerCase(Locale.ROOT)) {
            case "auto" -> AUTO;
            case "on", "true" -> ON;
            case "off", "false" -> OFF;
            default -> throw new IllegalArgumentException(setting + " must be one of " + CHOICES + ", not '" + value + "'");
        };
    }

    /**
     * Whether to use the offload on a host that has it ({@code available}) or lacks it.
     *
     * @param missing why the host lacks it, for the error
     * @throws IllegalStateException where the offload is required ({@link #ON}) and the host lacks it
     */
    public boolean use(String setting, boolean available, String missing) {
        if (this == OFF) {
            return false;
        }
        if (!available && this == ON) {
            throw new IllegalStateException(setting + "=on, but " + missing + " (" + setting
                    + "=auto uses it only where the host has it)");
        }
        return available;
    }

    /** The setting's spelling. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}

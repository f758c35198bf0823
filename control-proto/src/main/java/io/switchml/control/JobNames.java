package io.switchml.control;

/**
 * What a job name may be, one rule for the controller (which enforces it) and the worker (which
 * checks its own setting before it connects). Names are shown to operators by {@code switchml ctl},
 * the switch's log and its metrics, so a name may hold any printable text but no character that
 * would forge or hide text there: no control characters (NUL, newline, escape), no format characters
 * (the bidirectional overrides that reverse what follows, zero-width ones), no line or paragraph
 * separators, and nothing unassigned, private-use or an unpaired surrogate.
 */
public final class JobNames {
    /** In UTF-16 characters, as Java counts a string's length. */
    public static final int MAX_LENGTH = 200;

    private JobNames() {
    }

    /** What is wrong with {@code name} as a job name ("must have ...", "has ..."), or null when nothing. */
    public static String problem(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_LENGTH) {
            return "must have 1.." + MAX_LENGTH + " characters";
        }
        for (int i = 0; i < name.length(); ) {
            int c = name.codePointAt(i);
            if (!printable(c)) {
                return String.format("has the unprintable character U+%04X at index %d (control, format, separator,"
                        + " unassigned, private-use and lone surrogate characters are refused: names are shown to"
                        + " operators)", c, i);
            }
            i += Character.charCount(c);
        }
        return null;
    }

    private static boolean printable(int codePoint) {
        return switch (Character.getType(codePoint)) {
            case Character.CONTROL, Character.FORMAT, Character.UNASSIGNED, Character.SURROGATE, Character.PRIVATE_USE,
                 Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR -> false;
            default -> true;
        };
    }
}

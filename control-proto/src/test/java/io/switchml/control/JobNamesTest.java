package io.switchml.control;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class JobNamesTest {

    @ParameterizedTest
    @ValueSource(strings = {"resnet50", "spark-app-20240101-run-3-stage4-attempt0", "résumé 训练 🚀 (Ω)", "a b"})
    void printableTextIsAJobName(String name) {
        assertThat(JobNames.problem(name)).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"a\tb", "a\nb"})
    void theRefusalNamesTheCharacterAndWhy(String name) {
        assertThat(JobNames.problem(name)).isEqualTo(String.format("has the unprintable character U+%04X at index 1"
                + " (control, format, separator, unassigned, private-use and lone surrogate characters are refused:"
                + " names are shown to operators)", (int) name.charAt(1)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a\u0000b", "a\nb", "a\rb", "a\u001b[31mb", "a\u007fb", "a\u0085b", "a\u202Eb", "a\u200Bb",
            "a\u2028b", "a\u2029b", "a\uE000b", "a\uD800b", "a\uDC00", "a\u0378b", "a\uFEFFb"})
    void controlFormatSeparatorPrivateUnassignedAndLoneSurrogatesAreRefused(String name) {
        assertThat(JobNames.problem(name)).startsWith(String.format("has the unprintable character U+%04X at index 1",
                (int) name.charAt(1)));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, JobNames.MAX_LENGTH + 1})
    void emptyAndOverlongNamesAreRefused(int length) {
        assertThat(JobNames.problem("x".repeat(length))).isEqualTo("must have 1.." + JobNames.MAX_LENGTH + " characters");
        assertThat(JobNames.problem("x".repeat(JobNames.MAX_LENGTH))).isNull();
    }
}

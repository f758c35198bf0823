package io.switchml.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;

class TorchrunCommandTest {
    @Test
    void everythingAfterTheScriptIsTheScriptsOptionsIncluded() {
        CommandLine cl = SwitchMlCommand.commandLine();
        cl.parseArgs("torchrun", "--workers", "3", "train.py", "--epochs", "1", "--workers", "5", "-x", "--help");
        TorchrunCommand torchrun = cl.getSubcommands().get("torchrun").getCommand();
        assertThat(torchrun.workers).isEqualTo(3);
        assertThat(torchrun.script).containsExactly("train.py", "--epochs", "1", "--workers", "5", "-x", "--help");
        assertThat(torchrun.module).isFalse();
    }

    @Test
    void aModuleInPlaceOfTheScript() {
        CommandLine cl = SwitchMlCommand.commandLine();
        cl.parseArgs("torchrun", "-m", "switchml_torch.train", "--epochs", "1");
        TorchrunCommand torchrun = cl.getSubcommands().get("torchrun").getCommand();
        assertThat(torchrun.module).isTrue();
        assertThat(torchrun.script).containsExactly("switchml_torch.train", "--epochs", "1");
    }
}

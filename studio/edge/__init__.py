"""What the studio and its edge agents agree on, below both of them.

``studio.package`` (build, sign, deploy: the studio side) and ``studio.agent`` (the daemon on the board) both
import this package and neither imports the other: the signed bundle format and its verification
(``manifest``, ``trust``, ``verify``), the tensor datatypes and raw inputs ``runtime.json`` declares
(``tensors``, ``raw_inputs``) and the mDNS service name (``discovery``). Also the studio's shared layer below every
domain package: the one pre-processing per modality (``preprocess_text``, ``preprocess_image``, ``preprocess_audio``;
``preprocess`` builds a bundle's raw inputs from them) that the agent, Triton test inference, the generation runtime
and the GUI use, ELF headers (``elf``) and the generate stream's event line (``sse``). No Qt, no torch: it runs on
boards.
"""

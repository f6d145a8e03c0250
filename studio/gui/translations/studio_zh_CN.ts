<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AddServerForm</name>
    <message>
        <source>header &apos;{part}&apos; is not Key=Value</source>
        <translation>请求头“{part}”不是 Key=Value 格式</translation>
    </message>
    <message>
        <source>Add a server</source>
        <translation>添加服务器</translation>
    </message>
    <message>
        <source>http://127.0.0.1:8000 or grpc://host:8001</source>
        <translation>http://127.0.0.1:8000 或 grpc://host:8001</translation>
    </message>
    <message>
        <source>(from the URL)</source>
        <translation>（取自 URL）</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Key=Value; Key2=Value2</source>
        <translation>Key=Value; Key2=Value2</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>地址</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Protocol</source>
        <translation>协议</translation>
    </message>
    <message>
        <source>Headers</source>
        <translation>请求头</translation>
    </message>
    <message>
        <source>Metrics</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Remove selected</source>
        <translation>移除所选</translation>
    </message>
</context>
<context>
    <name>AgentsPanel</name>
    <message>
        <source>Edge agents</source>
        <translation>边缘代理</translation>
    </message>
    <message>
        <source>token file</source>
        <translation>令牌文件</translation>
    </message>
    <message>
        <source>choose the agent&apos;s token file</source>
        <translation>选择代理的令牌文件</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Discover</source>
        <translation>发现</translation>
    </message>
    <message>
        <source>find agents by mDNS (_studio-agent._tcp)</source>
        <translation>通过 mDNS 查找代理（_studio-agent._tcp）</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>代理</translation>
    </message>
    <message>
        <source>Board</source>
        <translation>开发板</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>地址</translation>
    </message>
    <message>
        <source>Select an agent to see its models and versions.</source>
        <translation>选择一个代理以查看其模型和版本。</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Active</source>
        <translation>当前激活</translation>
    </message>
    <message>
        <source>Created</source>
        <translation>创建时间</translation>
    </message>
    <message>
        <source>Signer</source>
        <translation>签名者</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <source>Roll back to previous</source>
        <translation>回滚到上一版本</translation>
    </message>
    <message>
        <source>Activate selected version</source>
        <translation>激活所选版本</translation>
    </message>
    <message>
        <source>Remove agent</source>
        <translation>移除代理</translation>
    </message>
    <message>
        <source>enter the agent&apos;s URL</source>
        <translation>请输入代理的地址</translation>
    </message>
    <message>
        <source>e.g. {url}</source>
        <translation>例如 {url}</translation>
    </message>
    <message>
        <source>token file {path} does not exist</source>
        <translation>令牌文件 {path} 不存在</translation>
    </message>
    <message>
        <source>copy /etc/studio-agent/token from the board</source>
        <translation>从开发板复制 /etc/studio-agent/token</translation>
    </message>
    <message>
        <source>Agent token file</source>
        <translation>代理令牌文件</translation>
    </message>
    <message>
        <source>no agent at {url}</source>
        <translation>{url} 上没有代理</translation>
    </message>
    <message>
        <source>add it first</source>
        <translation>请先添加它</translation>
    </message>
    <message>
        <source>{name}: token file set to {path}</source>
        <translation>{name}：令牌文件已设为 {path}</translation>
    </message>
    <message>
        <source>Remove {name} ({url}) from the workspace? The board keeps serving; add it again by URL or Discover.</source>
        <translation>从工作区移除 {name}（{url}）？开发板会继续提供服务；可通过 URL 或“发现”再次添加。</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Discover edge agents</source>
        <translation>发现边缘代理</translation>
    </message>
    <message>
        <source>Refresh edge agents</source>
        <translation>刷新边缘代理</translation>
    </message>
    <message>
        <source>rolling back {model} on {url}</source>
        <translation>正在回滚 {url} 上的 {model}</translation>
    </message>
    <message>
        <source>{name}: now {version} (was {previous}) on {url}</source>
        <translation>{name}：现为 {version}（之前为 {previous}），位于 {url}</translation>
    </message>
    <message>
        <source>Roll back {model}</source>
        <translation>回滚 {model}</translation>
    </message>
    <message>
        <source>the model</source>
        <translation>该模型</translation>
    </message>
    <message>
        <source>Roll back</source>
        <translation>回滚</translation>
    </message>
    <message>
        <source>Roll {model} on {name} back to its previous version? Clients are served by the previous version from then on.</source>
        <translation>将 {name} 上的 {model} 回滚到上一版本？此后客户端将由上一版本提供服务。</translation>
    </message>
    <message>
        <source>Activate version</source>
        <translation>激活版本</translation>
    </message>
    <message>
        <source>Serve version {version} of {model} on {name} instead of the active one?</source>
        <translation>在 {name} 上改用 {model} 的版本 {version} 提供服务，替换当前激活的版本？</translation>
    </message>
    <message>
        <source>Activate</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>No agents yet: add one by URL (with its token file) or press Discover.</source>
        <translation>尚无代理：通过 URL（及其令牌文件）添加，或点击“发现”。</translation>
    </message>
    <message>
        <source> (add its token file to manage it)</source>
        <translation>（添加其令牌文件后才能管理）</translation>
    </message>
    <message>
        <source>{get} on {get2}, up {get3:.0f} s; temperature: {get4}; power: {get5}</source>
        <translation>{get}，运行于 {get2}，已运行 {get3:.0f} s；温度：{get4}；功耗：{get5}</translation>
    </message>
    <message>
        <source>✔ active</source>
        <translation>✔ 当前</translation>
    </message>
    <message>
        <source>Recent: {events}</source>
        <translation>最近：{events}</translation>
    </message>
    <message>
        <source>browsing mDNS for {service}</source>
        <translation>正在通过 mDNS 查找 {service}</translation>
    </message>
</context>
<context>
    <name>BrokenPage</name>
    <message>
        <source>The {title} page could not be loaded</source>
        <translation>无法加载“{title}”页面</translation>
    </message>
    <message>
        <source>Module &lt;code&gt;{module}&lt;/code&gt; raised an error. The rest of the studio works; fix the error (or reinstall the package that provides it) and restart.</source>
        <translation>模块 &lt;code&gt;{module}&lt;/code&gt; 出错。Studio 的其余部分仍可使用；请修复该错误（或重新安装提供它的软件包）后重启。</translation>
    </message>
</context>
<context>
    <name>CandidateScatter</name>
    <message>
        <source>nodes on the device (%)</source>
        <translation>设备上的节点（%）</translation>
    </message>
    <message>
        <source>size (KiB)</source>
        <translation>大小（KiB）</translation>
    </message>
    <message>
        <source>host latency (ms)</source>
        <translation>主机延迟（ms）</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:{value}&apos;&gt;★&lt;/span&gt; chosen · &lt;span style=&apos;color:{value2}&apos;&gt;●&lt;/span&gt; Pareto front · &lt;span style=&apos;color:{value3}&apos;&gt;●&lt;/span&gt; meets the budget · &lt;span style=&apos;color:{value4}&apos;&gt;●&lt;/span&gt; misses it · dashed: the budget</source>
        <translation>&lt;span style=&apos;color:{value}&apos;&gt;★&lt;/span&gt; 已选 · &lt;span style=&apos;color:{value2}&apos;&gt;●&lt;/span&gt; 帕累托前沿 · &lt;span style=&apos;color:{value3}&apos;&gt;●&lt;/span&gt; 满足预算 · &lt;span style=&apos;color:{value4}&apos;&gt;●&lt;/span&gt; 未满足 · 虚线：预算</translation>
    </message>
</context>
<context>
    <name>CandidateTable</name>
    <message>
        <source>★ chosen, ◆ on the Pareto front</source>
        <translation>★ 已选，◆ 位于帕累托前沿</translation>
    </message>
</context>
<context>
    <name>CheckPanel</name>
    <message>
        <source>Check: not run yet</source>
        <translation>检查：尚未运行</translation>
    </message>
    <message>
        <source>Severity</source>
        <translation>严重程度</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Field</source>
        <translation>字段</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Hint</source>
        <translation>提示</translation>
    </message>
    <message>
        <source>hint: {hint}</source>
        <translation>提示：{hint}</translation>
    </message>
    <message>
        <source>Check: {value}: {n_err} error(s), {n_warn} warning(s)  ·  {value2}</source>
        <translation>检查：{value}：{n_err} 个错误，{n_warn} 个警告  ·  {value2}</translation>
    </message>
    <message>
        <source>OK</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>FAILED</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>no models</source>
        <translation>无模型</translation>
    </message>
    <message>
        <source>No findings: every config matches its model.</source>
        <translation>没有发现问题：每个配置都与其模型相符。</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>info</source>
        <translation>信息</translation>
    </message>
</context>
<context>
    <name>Columns</name>
    <message>
        <source>Change</source>
        <translation>变更</translation>
    </message>
    <message>
        <source>In A (before)</source>
        <translation>A 中（修改前）</translation>
    </message>
    <message>
        <source>In B (after)</source>
        <translation>B 中（修改后）</translation>
    </message>
    <message>
        <source>Op</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>What changed</source>
        <translation>变更内容</translation>
    </message>
    <message>
        <source>agent</source>
        <translation>代理</translation>
    </message>
    <message>
        <source>url</source>
        <translation>URL</translation>
    </message>
    <message>
        <source>ring</source>
        <translation>环</translation>
    </message>
    <message>
        <source>state</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>ver</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>inferences</source>
        <translation>推理次数</translation>
    </message>
    <message>
        <source>executions</source>
        <translation>执行次数</translation>
    </message>
    <message>
        <source>success</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>fail</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>queue us</source>
        <translation>排队 us</translation>
    </message>
    <message>
        <source>input us</source>
        <translation>输入 us</translation>
    </message>
    <message>
        <source>infer us</source>
        <translation>推理 us</translation>
    </message>
    <message>
        <source>output us</source>
        <translation>输出 us</translation>
    </message>
    <message>
        <source>batch sizes</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>metric</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>previous</source>
        <translation>上一版本</translation>
    </message>
    <message>
        <source>requests</source>
        <translation>请求数</translation>
    </message>
    <message>
        <source>errors %</source>
        <translation>错误率 %</translation>
    </message>
    <message>
        <source>p95 ms</source>
        <translation>p95 ms</translation>
    </message>
    <message>
        <source>p99 ms</source>
        <translation>p99 ms</translation>
    </message>
    <message>
        <source>gate</source>
        <translation>门限</translation>
    </message>
    <message>
        <source>reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>labels</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>token</source>
        <translation>令牌</translation>
    </message>
    <message>
        <source>in Devices</source>
        <translation>在“设备”中</translation>
    </message>
    <message>
        <source>Severity</source>
        <translation>严重程度</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标平台</translation>
    </message>
    <message>
        <source>Rule</source>
        <translation>规则</translation>
    </message>
    <message>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Hint</source>
        <translation>提示</translation>
    </message>
    <message>
        <source>Part</source>
        <translation>部分</translation>
    </message>
    <message>
        <source>Id</source>
        <translation>ID</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Graph changes</source>
        <translation>计算图变更</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Tool verdict</source>
        <translation>工具判定</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Case</source>
        <translation>用例</translation>
    </message>
    <message>
        <source>Graph</source>
        <translation>计算图</translation>
    </message>
    <message>
        <source>Input shapes</source>
        <translation>输入形状</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Max abs</source>
        <translation>最大绝对误差</translation>
    </message>
    <message>
        <source>Max rel</source>
        <translation>最大相对误差</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Modality</source>
        <translation>模态</translation>
    </message>
    <message>
        <source>Latency</source>
        <translation>延迟</translation>
    </message>
    <message>
        <source>Mean ms</source>
        <translation>平均 ms</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>占比</translation>
    </message>
    <message>
        <source>Module</source>
        <translation>模块</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>PyTorch ms</source>
        <translation>PyTorch ms</translation>
    </message>
    <message>
        <source>ONNX ms</source>
        <translation>ONNX ms</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Target · node</source>
        <translation>目标平台 · 节点</translation>
    </message>
    <message>
        <source>Agree</source>
        <translation>一致</translation>
    </message>
    <message>
        <source>Tool says</source>
        <translation>工具结论</translation>
    </message>
    <message>
        <source>Profile says</source>
        <translation>平台配置结论</translation>
    </message>
    <message>
        <source>file</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>kind</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>machine</source>
        <translation>机器</translation>
    </message>
    <message>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <source>max abs</source>
        <translation>最大绝对误差</translation>
    </message>
    <message>
        <source>max rel</source>
        <translation>最大相对误差</translation>
    </message>
    <message>
        <source>cosine</source>
        <translation>余弦相似度</translation>
    </message>
    <message>
        <source>result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>op</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>按键</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Use</source>
        <translation>使用</translation>
    </message>
    <message>
        <source>Input name</source>
        <translation>输入名称</translation>
    </message>
    <message>
        <source>dtype</source>
        <translation>数据类型</translation>
    </message>
    <message>
        <source>Example shape</source>
        <translation>示例形状</translation>
    </message>
    <message>
        <source>Dynamic axes</source>
        <translation>动态轴</translation>
    </message>
    <message>
        <source>series</source>
        <translation>序列</translation>
    </message>
    <message>
        <source>latest</source>
        <translation>最新值</translation>
    </message>
    <message>
        <source>source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>SHA-256</source>
        <translation>SHA-256</translation>
    </message>
    <message>
        <source>Plugin</source>
        <translation>插件</translation>
    </message>
    <message>
        <source>Contribution (or distribution)</source>
        <translation>功能（或发行包）</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详情</translation>
    </message>
</context>
<context>
    <name>Compile</name>
    <message>
        <source>the written library on this host</source>
        <translation>在本机上运行写出的库</translation>
    </message>
    <message>
        <source>a host build of the same Relax module (the target&apos;s code is not run here)</source>
        <translation>同一 Relax 模块的本机构建（目标平台的代码不在此运行）</translation>
    </message>
    <message>
        <source>rknn-toolkit2&apos;s x86 simulator (the NPU runs the same .rknn)</source>
        <translation>rknn-toolkit2 的 x86 模拟器（NPU 运行同一个 .rknn）</translation>
    </message>
</context>
<context>
    <name>CompilePage</name>
    <message>
        <source>Compile for a board</source>
        <translation>为开发板编译</translation>
    </message>
    <message>
        <source>ONNX -&gt; TVM Relax (a library for the board&apos;s CPU or GPU) or, with the RKNN backend, a .rknn for a Rockchip NPU; checked against ONNX Runtime on random inputs. When TVM fails, the graph is bisected to the failing nodes.</source>
        <translation>ONNX -&gt; TVM Relax（面向开发板 CPU 或 GPU 的库），或使用 RKNN 后端生成面向瑞芯微 NPU 的 .rknn；在随机输入上与 ONNX Runtime 对比校验。TVM 失败时，会对计算图二分定位到出错的节点。</translation>
    </message>
    <message>
        <source>Build</source>
        <translation>构建</translation>
    </message>
    <message>
        <source>model.onnx (or a part, e.g. the vision encoder)</source>
        <translation>model.onnx（或其中一部分，例如视觉编码器）</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <source>fp16 (float)</source>
        <translation>fp16（浮点）</translation>
    </message>
    <message>
        <source>int8 (calibrated, per-layer error)</source>
        <translation>int8（校准，逐层误差）</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>folder of .npz samples (default: 8 seeded samples)</source>
        <translation>.npz 样本文件夹（默认：8 个固定种子样本）</translation>
    </message>
    <message>
        <source>Calibration</source>
        <translation>校准</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标平台</translation>
    </message>
    <message>
        <source>for dynamic dims: pixel_values=1,3,224,224; input_ids=1,64</source>
        <translation>用于动态维度：pixel_values=1,3,224,224; input_ids=1,64</translation>
    </message>
    <message>
        <source>NAME=D,D,... with sizes &gt;= 1, several separated by &apos;;&apos;
CLI: --shape NAME=D,D,...</source>
        <translation>NAME=D,D,...，各维大小 &gt;= 1，多个之间用 &apos;;&apos; 分隔
CLI: --shape NAME=D,D,...</translation>
    </message>
    <message>
        <source>Shapes</source>
        <translation>形状</translation>
    </message>
    <message>
        <source>default: WORKSPACE/compiled/MODEL-TARGET (never the export folder)</source>
        <translation>默认：WORKSPACE/compiled/MODEL-TARGET（绝不是导出文件夹）</translation>
    </message>
    <message>
        <source>where the compiled module goes; never inside an export folder (a bundle made from that folder would carry it)</source>
        <translation>编译产物的存放位置；绝不放在导出文件夹内（由该文件夹打成的部署包会把它带上）</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Verify against ONNX Runtime (parity + latency)</source>
        <translation>与 ONNX Runtime 对比验证（一致性 + 延迟）</translation>
    </message>
    <message>
        <source>Fold shape arithmetic first (onnxslim)</source>
        <translation>先折叠形状计算（onnxslim）</translation>
    </message>
    <message>
        <source>Replace an existing output folder</source>
        <translation>替换已有的输出文件夹</translation>
    </message>
    <message>
        <source>Compile</source>
        <translation>编译</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Package for a board</source>
        <translation>为开发板打包</translation>
    </message>
    <message>
        <source>open Packaging with this compiled module (a signed bundle served with TVM)</source>
        <translation>用该编译产物打开“打包”页面（由 TVM 提供服务的签名部署包）</translation>
    </message>
    <message>
        <source>Toolchain</source>
        <translation>工具链</translation>
    </message>
    <message>
        <source>TVM Relax (built in)</source>
        <translation>TVM Relax（内置）</translation>
    </message>
    <message>
        <source>{backend} — unavailable</source>
        <translation>{backend} — 不可用</translation>
    </message>
    <message>
        <source>{tid} NPU via {label}: static shapes only (give dynamic dims under Shapes); parity in the toolkit&apos;s simulator</source>
        <translation>{tid} NPU（通过 {label}）：仅支持静态形状（请在“形状”中给出动态维度）；一致性在工具包的模拟器中校验</translation>
    </message>
    <message>
        <source>{description}. TVM target {tvm}</source>
        <translation>{description}。TVM 目标 {tvm}</translation>
    </message>
    <message>
        <source>default: {out}</source>
        <translation>默认：{out}</translation>
    </message>
    <message>
        <source>apache-tvm: {value}</source>
        <translation>apache-tvm：{value}</translation>
    </message>
    <message>
        <source>apache-tvm: not installed. {value}</source>
        <translation>apache-tvm：未安装。{value}</translation>
    </message>
    <message>
        <source>aarch64 cross compiler: {value}</source>
        <translation>aarch64 交叉编译器：{value}</translation>
    </message>
    <message>
        <source>aarch64 cross compiler: not installed; board builds write model.tar (objects) only (`make cross-toolchain` installs Debian&apos;s gcc-aarch64-linux-gnu)</source>
        <translation>aarch64 交叉编译器：未安装；开发板构建只写出 model.tar（目标文件）（`make cross-toolchain` 会安装 Debian 的 gcc-aarch64-linux-gnu）</translation>
    </message>
    <message>
        <source>mlc_llm (language models): {value}</source>
        <translation>mlc_llm（语言模型）：{value}</translation>
    </message>
    <message>
        <source>install the backend&apos;s toolchain first (see Toolchain)</source>
        <translation>请先安装该后端的工具链（见“工具链”）</translation>
    </message>
    <message>
        <source>ONNX model</source>
        <translation>ONNX 模型</translation>
    </message>
    <message>
        <source>Calibration samples (.npz)</source>
        <translation>校准样本（.npz）</translation>
    </message>
    <message>
        <source>Output folder</source>
        <translation>输出文件夹</translation>
    </message>
    <message>
        <source>no model chosen</source>
        <translation>未选择模型</translation>
    </message>
    <message>
        <source>choose an .onnx file</source>
        <translation>选择一个 .onnx 文件</translation>
    </message>
    <message>
        <source>warning: {note}</source>
        <translation>警告：{note}</translation>
    </message>
    <message>
        <source>starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>compile {name} for {target}</source>
        <translation>为 {target} 编译 {name}</translation>
    </message>
    <message>
        <source>compiled module not recorded in the workspace: {error}</source>
        <translation>编译产物未记录到工作区：{error}</translation>
    </message>
    <message>
        <source>{status} in {get:.1f} s</source>
        <translation>{status}，用时 {get:.1f} s</translation>
    </message>
    <message>
        <source>{dtype} error (1 - cosine, rknn accuracy_analysis)</source>
        <translation>{dtype} 误差（1 - cosine，rknn accuracy_analysis）</translation>
    </message>
</context>
<context>
    <name>CompileReportView</name>
    <message>
        <source>No compile yet: choose a model and a target, then Compile.</source>
        <translation>尚未编译：选择模型和目标平台，然后点击“编译”。</translation>
    </message>
    <message>
        <source>Artifacts</source>
        <translation>产物</translation>
    </message>
    <message>
        <source>Parity against ONNX Runtime</source>
        <translation>与 ONNX Runtime 的一致性</translation>
    </message>
    <message>
        <source>Per-layer error on the graph</source>
        <translation>计算图上的逐层误差</translation>
    </message>
    <message>
        <source>open the model in the inspector, coloured by the toolkit&apos;s per-layer error (1 - cosine against the float model, from accuracy_analysis)</source>
        <translation>在检查器中打开模型，按工具包的逐层误差着色（相对浮点模型的 1 - 余弦相似度，来自 accuracy_analysis）</translation>
    </message>
    <message>
        <source>Failure localisation</source>
        <translation>故障定位</translation>
    </message>
    <message>
        <source>Show in inspector</source>
        <translation>在检查器中显示</translation>
    </message>
    <message>
        <source>compiled and verified</source>
        <translation>已编译并验证</translation>
    </message>
    <message>
        <source>compiled</source>
        <translation>已编译</translation>
    </message>
    <message>
        <source>failed at {stage}</source>
        <translation>在 {stage} 失败</translation>
    </message>
    <message>
        <source>{name} for {target}: {what}</source>
        <translation>{name}（{target}）：{what}</translation>
    </message>
    <message>
        <source>Built by {get} {get2} for {get3} ({get4})</source>
        <translation>由 {get} {get2} 为 {get3} 构建（{get4}）</translation>
    </message>
    <message>
        <source>Built by apache-tvm {version}</source>
        <translation>由 apache-tvm {version} 构建</translation>
    </message>
    <message>
        <source>passed</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>not run</source>
        <translation>未运行</translation>
    </message>
    <message>
        <source>skipped: {why}</source>
        <translation>已跳过：{why}</translation>
    </message>
    <message>
        <source> — {mode}; {tolerance}, inputs {shapes}</source>
        <translation> — {mode}；{tolerance}，输入 {shapes}</translation>
    </message>
    <message>
        <source>pass</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Latency, median of {runs} alternating runs: TVM {tvm_ms_median:.3f} ms, ONNX Runtime {ort_ms_median:.3f} ms (TVM is {speedup_vs_ort:.2f}x ORT&apos;s speed)</source>
        <translation>延迟（{runs} 次交替运行的中位数）：TVM {tvm_ms_median:.3f} ms，ONNX Runtime {ort_ms_median:.3f} ms（TVM 速度为 ORT 的 {speedup_vs_ort:.2f} 倍）</translation>
    </message>
    <message>
        <source>Per-layer error of the int8 build ({n} layers, accuracy_analysis): worst cosine {float:.5f}</source>
        <translation>int8 构建的逐层误差（{n} 层，accuracy_analysis）：最差余弦相似度 {float:.5f}</translation>
    </message>
    <message>
        <source>at {get}</source>
        <translation>位于 {get}</translation>
    </message>
    <message>
        <source>No failure.</source>
        <translation>没有失败。</translation>
    </message>
    <message>
        <source>Warnings: {warn}</source>
        <translation>警告：{warn}</translation>
    </message>
    <message>
        <source>Bisection: {value} TVM trials, {value2} of {value3} nodes.</source>
        <translation>二分定位：{value} 次 TVM 试验，{value3} 个节点中的 {value2} 个。</translation>
    </message>
    <message>
        <source>Hint: {hint}</source>
        <translation>提示：{hint}</translation>
    </message>
</context>
<context>
    <name>ContextToolbar</name>
    <message>
        <source>devices: none</source>
        <translation>设备：无</translation>
    </message>
    <message>
        <source>devices: {ok} ok, {down} down of {total}</source>
        <translation>设备：{total} 台中 {ok} 台正常，{down} 台离线</translation>
    </message>
    <message>
        <source>devices: {ok} ok of {total}</source>
        <translation>设备：{total} 台中 {ok} 台正常</translation>
    </message>
    <message>
        <source>Main toolbar</source>
        <translation>主工具栏</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标平台</translation>
    </message>
    <message>
        <source>Workspace: recent workspaces (File &gt; Open workspace for another)</source>
        <translation>工作区：最近的工作区（其他工作区请用“文件 &gt; 打开工作区”）</translation>
    </message>
    <message>
        <source>Current model: every page acts on it</source>
        <translation>当前模型：所有页面都作用于它</translation>
    </message>
    <message>
        <source>Current target accelerator</source>
        <translation>当前目标加速器</translation>
    </message>
    <message>
        <source>Search pages, models, targets</source>
        <translation>搜索页面、模型、目标平台</translation>
    </message>
    <message>
        <source>Jump to a page, model or target (Ctrl+F)</source>
        <translation>跳转到页面、模型或目标平台（Ctrl+F）</translation>
    </message>
    <message>
        <source>Triton servers and edge agents of the workspace</source>
        <translation>工作区的 Triton 服务器和边缘代理</translation>
    </message>
    <message>
        <source>(no workspace)</source>
        <translation>（无工作区）</translation>
    </message>
    <message>
        <source>Open another workspace…</source>
        <translation>打开其他工作区…</translation>
    </message>
    <message>
        <source>(no models)</source>
        <translation>（无模型）</translation>
    </message>
</context>
<context>
    <name>DashboardsPage</name>
    <message>
        <source>Dashboards — live load, latency, resources and SLA verdicts</source>
        <translation>仪表板 — 实时负载、延迟、资源与 SLA 判定</translation>
    </message>
    <message>
        <source>model name on the server</source>
        <translation>服务器上的模型名称</translation>
    </message>
    <message>
        <source>optional: http://HOST:8002/metrics (default URL/metrics)</source>
        <translation>可选：http://HOST:8002/metrics（默认 URL/metrics）</translation>
    </message>
    <message>
        <source>Server URL</source>
        <translation>服务器 URL</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Metrics</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>concurrency</source>
        <translation>并发</translation>
    </message>
    <message>
        <source>rate</source>
        <translation>速率</translation>
    </message>
    <message>
        <source>concurrency levels (1,2,4) or requests per second (rate mode)</source>
        <translation>并发级别（1,2,4）或每秒请求数（速率模式）</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>Levels / rate</source>
        <translation>级别 / 速率</translation>
    </message>
    <message>
        <source>Duration per level</source>
        <translation>每级持续时间</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>no budget</source>
        <translation>无预算</translation>
    </message>
    <message>
        <source>SLA tier</source>
        <translation>SLA 等级</translation>
    </message>
    <message>
        <source>p95 budget</source>
        <translation>p95 预算</translation>
    </message>
    <message>
        <source>p99 budget</source>
        <translation>p99 预算</translation>
    </message>
    <message>
        <source>Targets from Devices</source>
        <translation>来自“设备”的目标</translation>
    </message>
    <message>
        <source>Add target</source>
        <translation>添加目标</translation>
    </message>
    <message>
        <source>add the URL and model above; several targets run side by side, one colour each</source>
        <translation>添加上面的 URL 和模型；多个目标并排运行，各用一种颜色</translation>
    </message>
    <message>
        <source>Start load</source>
        <translation>开始压测</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Record to</source>
        <translation>记录到</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Follow</source>
        <translation>跟随</translation>
    </message>
    <message>
        <source>zoom with the mouse wheel or a drag; Follow returns to the live view</source>
        <translation>用鼠标滚轮或拖动缩放；“跟随”返回实时视图</translation>
    </message>
    <message>
        <source>Replay…</source>
        <translation>回放…</translation>
    </message>
    <message>
        <source>Export PNG…</source>
        <translation>导出 PNG…</translation>
    </message>
    <message>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <source>Clear targets</source>
        <translation>清除目标</translation>
    </message>
    <message>
        <source>No run yet. Start a load against a KServe v2 server, or replay a recording.</source>
        <translation>尚未运行。对 KServe v2 服务器开始压测，或回放一段记录。</translation>
    </message>
    <message>
        <source>no connected device serves a model</source>
        <translation>没有已连接的设备在提供模型服务</translation>
    </message>
    <message>
        <source>connect a Triton server or agent on the Devices page</source>
        <translation>请在“设备”页面连接一个 Triton 服务器或代理</translation>
    </message>
    <message>
        <source>load run started on {target}</source>
        <translation>已在 {target} 上开始负载测试</translation>
    </message>
    <message>
        <source>running…</source>
        <translation>运行中…</translation>
    </message>
    <message>
        <source>Replay recording</source>
        <translation>回放记录</translation>
    </message>
    <message>
        <source>Recordings (*.sqlite *.db)</source>
        <translation>录制文件 (*.sqlite *.db)</translation>
    </message>
    <message>
        <source>replaying {name}</source>
        <translation>正在回放 {name}</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Export plots as PNG</source>
        <translation>将图表导出为 PNG</translation>
    </message>
    <message>
        <source>Export data as CSV</source>
        <translation>将数据导出为 CSV</translation>
    </message>
    <message>
        <source>could not write {path}</source>
        <translation>无法写入 {path}</translation>
    </message>
</context>
<context>
    <name>Details</name>
    <message>
        <source>scalar</source>
        <translation>标量</translation>
    </message>
    <message>
        <source>(omitted)</source>
        <translation>（省略）</translation>
    </message>
    <message>
        <source>(weight)</source>
        <translation>（权重）</translation>
    </message>
    <message>
        <source>dynamic from: {origins}</source>
        <translation>动态来源：{origins}</translation>
    </message>
    <message>
        <source>Graph input</source>
        <translation>计算图输入</translation>
    </message>
    <message>
        <source>Graph output</source>
        <translation>计算图输出</translation>
    </message>
    <message>
        <source>Verdict per target</source>
        <translation>各目标平台的判定</translation>
    </message>
    <message>
        <source> (the profile said {verdict}: {reason})</source>
        <translation>（平台配置的结论为 {verdict}：{reason}）</translation>
    </message>
    <message>
        <source>tensor</source>
        <translation>张量</translation>
    </message>
    <message>
        <source>dtype</source>
        <translation>数据类型</translation>
    </message>
    <message>
        <source>shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <source>Inputs</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>Outputs</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Attributes</source>
        <translation>属性</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Nested graphs</source>
        <translation>嵌套子图</translation>
    </message>
    <message>
        <source>{n} nodes inside (verdicts of nested nodes colour this node)</source>
        <translation>内含 {n} 个节点（嵌套节点的判定决定此节点的颜色）</translation>
    </message>
    <message>
        <source>No model inspected yet.</source>
        <translation>尚未检查任何模型。</translation>
    </message>
    <message>
        <source>({main} in the main graph, {subgraphs} subgraphs)</source>
        <translation>（主图 {main} 个，子图 {subgraphs} 个）</translation>
    </message>
    <message>
        <source>{size} in {files} file(s), {tensors} tensors</source>
        <translation>{size}，{files} 个文件，{tensors} 个张量</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>Initializers</source>
        <translation>初始化器</translation>
    </message>
    <message>
        <source>External data</source>
        <translation>外部数据</translation>
    </message>
    <message>
        <source>File size</source>
        <translation>文件大小</translation>
    </message>
    <message>
        <source>FLOPs (est.)</source>
        <translation>FLOPs（估算）</translation>
    </message>
    <message>
        <source>Activations peak</source>
        <translation>激活峰值</translation>
    </message>
    <message>
        <source>Activations total</source>
        <translation>激活总量</translation>
    </message>
    <message>
        <source>Opsets</source>
        <translation>Opset</translation>
    </message>
    <message>
        <source>IR / producer</source>
        <translation>IR / 生成工具</translation>
    </message>
    <message>
        <source>Operators ({n} types)</source>
        <translation>算子（{n} 种）</translation>
    </message>
    <message>
        <source>… {n} more op types</source>
        <translation>… 另有 {n} 种算子</translation>
    </message>
    <message>
        <source>All shapes are static.</source>
        <translation>所有形状都是静态的。</translation>
    </message>
    <message>
        <source>{tensors} tensors have dynamic dims, from {origins} origin(s):</source>
        <translation>{tensors} 个张量含动态维度，来自 {origins} 个源头：</translation>
    </message>
    <message>
        <source>origin</source>
        <translation>源头</translation>
    </message>
    <message>
        <source>kind</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>reaches</source>
        <translation>影响范围</translation>
    </message>
    <message>
        <source>passed</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>FAILED</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Parity against the original ({precision}, {cases} input cases): {verdict} · max |Δ| {max_abs} · min cosine {cosine}</source>
        <translation>与原始模型的一致性（{precision}，{cases} 组输入）：{verdict} · 最大 |Δ| {max_abs} · 最小 cosine {cosine}</translation>
    </message>
    <message>
        <source>Parity inputs: {sizes} (--static first, then the model&apos;s processor files on the sample image and clip)</source>
        <translation>一致性检查输入：{sizes}（优先用 --static，其次用模型自带的处理器文件处理示例图片和音频片段）</translation>
    </message>
    <message>
        <source>Parity inputs: default sizes (no --static and no processor files beside the model)</source>
        <translation>一致性检查输入：默认尺寸（未给 --static，模型旁也没有处理器文件）</translation>
    </message>
    <message>
        <source>nodes {nodes} · weights {weights} · dynamic origins {origins}</source>
        <translation>节点 {nodes} · 权重 {weights} · 动态源头 {origins}</translation>
    </message>
    <message>
        <source>target</source>
        <translation>目标平台</translation>
    </message>
    <message>
        <source>verdict</source>
        <translation>判定</translation>
    </message>
    <message>
        <source>unsupported</source>
        <translation>不支持</translation>
    </message>
    <message>
        <source>risky</source>
        <translation>有风险</translation>
    </message>
    <message>
        <source>resolved</source>
        <translation>已解决</translation>
    </message>
    <message>
        <source>new</source>
        <translation>新增</translation>
    </message>
    <message>
        <source>pass</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>fail</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Resolved</source>
        <translation>已解决</translation>
    </message>
    <message>
        <source>New</source>
        <translation>新增</translation>
    </message>
    <message>
        <source>… {n} more</source>
        <translation>… 另有 {n} 项</translation>
    </message>
</context>
<context>
    <name>DeviceReasons</name>
    <message>
        <source>connection refused</source>
        <translation>连接被拒绝</translation>
    </message>
    <message>
        <source>timed out</source>
        <translation>超时</translation>
    </message>
    <message>
        <source>TLS handshake failed</source>
        <translation>TLS 握手失败</translation>
    </message>
    <message>
        <source>token rejected</source>
        <translation>令牌被拒绝</translation>
    </message>
    <message>
        <source>host name not found (DNS)</source>
        <translation>找不到主机名（DNS）</translation>
    </message>
    <message>
        <source>TLS certificate not trusted</source>
        <translation>TLS 证书不受信任</translation>
    </message>
    <message>
        <source>TLS mismatch: the server speaks plain HTTP</source>
        <translation>TLS 不匹配：服务器使用的是明文 HTTP</translation>
    </message>
    <message>
        <source>not answering</source>
        <translation>无响应</translation>
    </message>
    <message>
        <source>connected</source>
        <translation>已连接</translation>
    </message>
    <message>
        <source>connecting...</source>
        <translation>正在连接...</translation>
    </message>
    <message>
        <source>not checked yet</source>
        <translation>尚未检查</translation>
    </message>
    <message>
        <source>disconnected: {reason}</source>
        <translation>已断开：{reason}</translation>
    </message>
</context>
<context>
    <name>DeviceTargetPicker</name>
    <message>
        <source>no device named &apos;{name}&apos;</source>
        <translation>没有名为“{name}”的设备</translation>
    </message>
    <message>
        <source>add it on the Devices page</source>
        <translation>请在“设备”页面添加它</translation>
    </message>
    <message>
        <source>{name} lists no model to load ({state})</source>
        <translation>{name} 没有可加载的模型（{state}）</translation>
    </message>
    <message>
        <source>wait until Devices has connected to it, or type its URL and model above</source>
        <translation>请等待“设备”页面连接上它，或在上方输入其地址和模型</translation>
    </message>
    <message>
        <source>no model name</source>
        <translation>未填写模型名称</translation>
    </message>
    <message>
        <source>type the model&apos;s name on the server</source>
        <translation>请输入服务器上的模型名称</translation>
    </message>
    <message>
        <source>Triton servers and edge agents the Devices page knows, with their state</source>
        <translation>“设备”页面已知的 Triton 服务器和边缘代理及其状态</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>add the chosen device as a target (its URL, served model, metrics, local pid)</source>
        <translation>将所选设备添加为目标（其 URL、所服务的模型、指标、本地 pid）</translation>
    </message>
    <message>
        <source>Add all connected</source>
        <translation>添加所有已连接设备</translation>
    </message>
    <message>
        <source>add every device Devices reports as connected</source>
        <translation>添加“设备”页面报告为已连接的所有设备</translation>
    </message>
    <message>
        <source>no devices yet: add them on the Devices page</source>
        <translation>尚无设备：请在“设备”页面添加</translation>
    </message>
    <message>
        <source>URL/metrics if it answers</source>
        <translation>URL/metrics（若有响应）</translation>
    </message>
    <message>
        <source>metrics: {url}</source>
        <translation>指标：{url}</translation>
    </message>
    <message>
        <source>server pid {pid}</source>
        <translation>服务器 pid {pid}</translation>
    </message>
</context>
<context>
    <name>Devices</name>
    <message>
        <source>Load</source>
        <translation>加载</translation>
    </message>
    <message>
        <source>Unload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>Reload</source>
        <translation>重新加载</translation>
    </message>
    <message>
        <source>Upload version...</source>
        <translation>上传版本...</translation>
    </message>
    <message>
        <source>Show config</source>
        <translation>显示配置</translation>
    </message>
</context>
<context>
    <name>DevicesPage</name>
    <message>
        <source>Devices</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Servers and agents</source>
        <translation>服务器和代理</translation>
    </message>
    <message>
        <source>Servers</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>Test inference</source>
        <translation>测试推理</translation>
    </message>
    <message>
        <source>Edge agents</source>
        <translation>边缘代理</translation>
    </message>
    <message>
        <source>(edge agent)</source>
        <translation>（边缘代理）</translation>
    </message>
    <message>
        <source>select a server and a model first</source>
        <translation>请先选择一个服务器和一个模型</translation>
    </message>
    <message>
        <source>config of {model}</source>
        <translation>{model} 的配置</translation>
    </message>
    <message>
        <source>Model folder to upload as a new version of {model}</source>
        <translation>作为 {model} 新版本上传的模型文件夹</translation>
    </message>
    <message>
        <source>Version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Version number</source>
        <translation>版本号</translation>
    </message>
    <message>
        <source>Unload model</source>
        <translation>卸载模型</translation>
    </message>
    <message>
        <source>Unload {model} on {server}? Requests to it fail until it is loaded again.</source>
        <translation>卸载 {server} 上的 {model}？在重新加载前，对它的请求都会失败。</translation>
    </message>
    <message>
        <source>Unload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>select a connected server and a ready model first</source>
        <translation>请先选择一个已连接的服务器和一个就绪的模型</translation>
    </message>
    <message>
        <source>running...</source>
        <translation>运行中...</translation>
    </message>
    <message>
        <source>test inference on {model}</source>
        <translation>在 {model} 上测试推理</translation>
    </message>
    <message>
        <source>generate on {model}</source>
        <translation>在 {model} 上生成</translation>
    </message>
</context>
<context>
    <name>Diff</name>
    <message>
        <source>added (B only)</source>
        <translation>新增（仅 B）</translation>
    </message>
    <message>
        <source>removed (A only)</source>
        <translation>删除（仅 A）</translation>
    </message>
    <message>
        <source>changed</source>
        <translation>已变更</translation>
    </message>
    <message>
        <source>shape only</source>
        <translation>仅形状</translation>
    </message>
    <message>
        <source>; +{n} more</source>
        <translation>；另有 {n} 项</translation>
    </message>
    <message>
        <source>graph {section}</source>
        <translation>计算图 {section}</translation>
    </message>
    <message>
        <source>op / attributes / wiring changed</source>
        <translation>算子 / 属性 / 连接已变更</translation>
    </message>
    <message>
        <source>shapes only</source>
        <translation>仅形状变化</translation>
    </message>
</context>
<context>
    <name>DiffPage</name>
    <message>
        <source>Diff</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>model A, before (.onnx): e.g. the original a fix was made from</source>
        <translation>模型 A，修改前（.onnx）：例如修复所基于的原始模型</translation>
    </message>
    <message>
        <source>model B, after (.onnx): e.g. the output of a fix, an int8 copy, another export</source>
        <translation>模型 B，修改后（.onnx）：例如修复的输出、int8 副本、另一次导出</translation>
    </message>
    <message>
        <source>A (before)</source>
        <translation>A（修改前）</translation>
    </message>
    <message>
        <source>B (after)</source>
        <translation>B（修改后）</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Swap A ⇄ B</source>
        <translation>交换 A ⇄ B</translation>
    </message>
    <message>
        <source>compare the other way round (B becomes before)</source>
        <translation>反向对比（B 作为修改前）</translation>
    </message>
    <message>
        <source>Verdicts for</source>
        <translation>判定目标</translation>
    </message>
    <message>
        <source>(structure only)</source>
        <translation>（仅结构）</translation>
    </message>
    <message>
        <source>also compare each node&apos;s verdict for this target: the workspace&apos;s current target (choosing another here makes it every page&apos;s), or structure only</source>
        <translation>同时对比每个节点在该目标平台上的判定：默认为工作区的当前目标平台（在此选择其他平台会让所有页面都使用它），或仅对比结构</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>ONNX model</source>
        <translation>ONNX 模型</translation>
    </message>
    <message>
        <source>ONNX models (*.onnx);;All files (*)</source>
        <translation>ONNX 模型 (*.onnx);;所有文件 (*)</translation>
    </message>
    <message>
        <source>chosen here</source>
        <translation>在此选择</translation>
    </message>
    <message>
        <source>Model A</source>
        <translation>模型 A</translation>
    </message>
    <message>
        <source>Model B</source>
        <translation>模型 B</translation>
    </message>
    <message>
        <source>{name} is empty</source>
        <translation>{name} 为空</translation>
    </message>
    <message>
        <source>choose an .onnx file with Browse…</source>
        <translation>用“浏览…”选择一个 .onnx 文件</translation>
    </message>
    <message>
        <source>{name}: no such file: {p}</source>
        <translation>{name}：文件不存在：{p}</translation>
    </message>
    <message>
        <source>check the path, or Browse…</source>
        <translation>检查路径，或使用“浏览…”</translation>
    </message>
    <message>
        <source>comparing…</source>
        <translation>正在对比…</translation>
    </message>
    <message>
        <source>diff {name} {name2}</source>
        <translation>对比 {name} 与 {name2}</translation>
    </message>
    <message>
        <source>A (before): {name} ({nodes_a:,} nodes)</source>
        <translation>A（修改前）：{name}（{nodes_a:,} 个节点）</translation>
    </message>
    <message>
        <source>B (after): {name} ({nodes_b:,} nodes)</source>
        <translation>B（修改后）：{name}（{nodes_b:,} 个节点）</translation>
    </message>
    <message>
        <source>diff {a} -&gt; {b}: {removed} removed, {added} added, {changed} changed, {shape_only} in shapes only</source>
        <translation>对比 {a} -&gt; {b}：移除 {removed}，新增 {added}，变更 {changed}，仅形状变化 {shape_only}</translation>
    </message>
    <message>
        <source>Nothing matched.</source>
        <translation>没有任何匹配。</translation>
    </message>
    <message>
        <source>&lt;b&gt;No change&lt;/b&gt; from A ({a}) to B ({b}): {matched} nodes matched ({by_name} by name).</source>
        <translation>从 A（{a}）到 B（{b}）&lt;b&gt;无变化&lt;/b&gt;：{matched} 个节点已匹配（{by_name} 个按名称）。</translation>
    </message>
    <message>
        <source>From A ({a}) to B ({b}): &lt;b&gt;{removed} removed&lt;/b&gt; (in A only), &lt;b&gt;{added} added&lt;/b&gt; (in B only), &lt;b&gt;{changed} changed&lt;/b&gt; in op, attributes or wiring, &lt;b&gt;{shape_only} in shapes only&lt;/b&gt;; {matched} of {nodes_a} / {nodes_b} nodes matched ({by_name} by name, {by_structure} by structure).</source>
        <translation>从 A（{a}）到 B（{b}）：&lt;b&gt;移除 {removed}&lt;/b&gt;（仅在 A 中），&lt;b&gt;新增 {added}&lt;/b&gt;（仅在 B 中），&lt;b&gt;{changed} 个&lt;/b&gt;算子、属性或连接有变更，&lt;b&gt;{shape_only} 个仅形状变化&lt;/b&gt;；{nodes_a} / {nodes_b} 个节点中匹配 {matched} 个（{by_name} 个按名称，{by_structure} 个按结构）。</translation>
    </message>
    <message>
        <source>changed nodes by kind: {kinds}</source>
        <translation>按类别统计的变更节点：{kinds}</translation>
    </message>
    <message>
        <source>before: the original the {fix} was made from</source>
        <translation>修改前：{fix} 所基于的原始模型</translation>
    </message>
    <message>
        <source>after: the {fix} output (current model {name})</source>
        <translation>修改后：{fix} 的输出（当前模型 {name}）</translation>
    </message>
    <message>
        <source>before: the current model {name}</source>
        <translation>修改前：当前模型 {name}</translation>
    </message>
    <message>
        <source>after: its {fix} ({name})</source>
        <translation>修改后：它的 {fix}（{name}）</translation>
    </message>
    <message>
        <source>the current model {name}</source>
        <translation>当前模型 {name}</translation>
    </message>
</context>
<context>
    <name>DimsDialog</name>
    <message>
        <source>dynamic</source>
        <translation>动态</translation>
    </message>
    <message>
        <source>{dim}: enter a positive integer (or leave it empty)</source>
        <translation>{dim}：请输入正整数（或留空）</translation>
    </message>
    <message>
        <source>{dim}: enter a positive integer</source>
        <translation>{dim}：请输入正整数</translation>
    </message>
    <message>
        <source>set at least one dim</source>
        <translation>至少设置一个维度</translation>
    </message>
</context>
<context>
    <name>ExportPage</name>
    <message>
        <source>writing sample model {sample} to {folder}</source>
        <translation>正在将示例模型 {sample} 写入 {folder}</translation>
    </message>
    <message>
        <source>reading the model&apos;s signature</source>
        <translation>正在读取模型的签名</translation>
    </message>
    <message>
        <source>Export to ONNX</source>
        <translation>导出为 ONNX</translation>
    </message>
    <message>
        <source>HuggingFace model → validated ONNX graph, with tokenizer files and a report. Same as `studio export`.</source>
        <translation>HuggingFace 模型 → 经过验证的 ONNX 计算图，附带分词器文件和报告。等同于 `studio export`。</translation>
    </message>
    <message>
        <source>Back</source>
        <translation>上一步</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>下一步</translation>
    </message>
    <message>
        <source>sample list unavailable: {error}</source>
        <translation>示例列表不可用：{error}</translation>
    </message>
    <message>
        <source>Change options</source>
        <translation>修改选项</translation>
    </message>
    <message>
        <source>Next: signature</source>
        <translation>下一步：签名</translation>
    </message>
    <message>
        <source>Next: options</source>
        <translation>下一步：选项</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>New export</source>
        <translation>新建导出</translation>
    </message>
    <message>
        <source>writing the sample model and reading its signature…</source>
        <translation>正在写入示例模型并读取其签名…</translation>
    </message>
    <message>
        <source>reading the model&apos;s signature…</source>
        <translation>正在读取模型的签名…</translation>
    </message>
    <message>
        <source>Read signature of {label}</source>
        <translation>读取 {label} 的签名</translation>
    </message>
    <message>
        <source>unknown class</source>
        <translation>未知模型类</translation>
    </message>
    <message>
        <source>{label}: {arch} (model_type {type}) in {folder}</source>
        <translation>{label}：{arch}（model_type {type}），位于 {folder}</translation>
    </message>
    <message>
        <source>could not add {name} to the workspace: {error}</source>
        <translation>无法将 {name} 添加到工作区：{error}</translation>
    </message>
    <message>
        <source>Export {label}</source>
        <translation>导出 {label}</translation>
    </message>
    <message>
        <source>export of {name} failed at {stage}: {message}</source>
        <translation>{name} 的导出在 {stage} 失败：{message}</translation>
    </message>
    <message>
        <source>could not add the export to the workspace: {error}</source>
        <translation>无法将导出结果添加到工作区：{error}</translation>
    </message>
    <message>
        <source>added {name} ({path}) to the workspace</source>
        <translation>已将 {name}（{path}）添加到工作区</translation>
    </message>
</context>
<context>
    <name>ExportStages</name>
    <message>
        <source>loading the model</source>
        <translation>加载模型</translation>
    </message>
    <message>
        <source>tracing the model</source>
        <translation>追踪模型</translation>
    </message>
    <message>
        <source>ONNX export</source>
        <translation>ONNX 导出</translation>
    </message>
    <message>
        <source>shape inference</source>
        <translation>形状推断</translation>
    </message>
    <message>
        <source>ONNX Runtime load</source>
        <translation>ONNX Runtime 加载</translation>
    </message>
    <message>
        <source>parity with PyTorch</source>
        <translation>与 PyTorch 的一致性</translation>
    </message>
    <message>
        <source>tokenizer check</source>
        <translation>分词器检查</translation>
    </message>
    <message>
        <source>modality split</source>
        <translation>模态拆分</translation>
    </message>
    <message>
        <source>Operator not supported at this opset</source>
        <translation>该 opset 不支持此算子</translation>
    </message>
    <message>
        <source>Data-dependent control flow</source>
        <translation>数据相关的控制流</translation>
    </message>
    <message>
        <source>Shape not declared dynamic</source>
        <translation>形状未声明为动态</translation>
    </message>
    <message>
        <source>Data type mismatch</source>
        <translation>数据类型不匹配</translation>
    </message>
    <message>
        <source>Tokenizer mismatch</source>
        <translation>分词器不匹配</translation>
    </message>
    <message>
        <source>Outputs diverge from PyTorch</source>
        <translation>输出与 PyTorch 不一致</translation>
    </message>
</context>
<context>
    <name>FieldError</name>
    <message>
        <source>hint: {hint}</source>
        <translation>提示：{hint}</translation>
    </message>
</context>
<context>
    <name>FindingsPanel</name>
    <message>
        <source>● error</source>
        <translation>● 错误</translation>
    </message>
    <message>
        <source>▲ warning</source>
        <translation>▲ 警告</translation>
    </message>
    <message>
        <source>○ note</source>
        <translation>○ 提示</translation>
    </message>
    <message>
        <source>✓ overridden</source>
        <translation>✓ 已被覆盖</translation>
    </message>
    <message>
        <source>[overridden: {tool}]</source>
        <translation>[已被覆盖：{tool}]</translation>
    </message>
    <message>
        <source>the profile&apos;s finding; {tool}, and the tool wins</source>
        <translation>平台配置的发现；{tool}，以工具为准</translation>
    </message>
    <message>
        <source>What to do: {hint}</source>
        <translation>处理建议：{hint}</translation>
    </message>
    <message>
        <source>… {n} more</source>
        <translation>… 另有 {n} 项</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>tensor {name}</source>
        <translation>张量 {name}</translation>
    </message>
    <message>
        <source>Findings</source>
        <translation>发现的问题</translation>
    </message>
    <message>
        <source>all targets</source>
        <translation>所有目标平台</translation>
    </message>
    <message>
        <source>   Fix:</source>
        <translation>   修复：</translation>
    </message>
    <message>
        <source>{verdict} (verified: {tool})</source>
        <translation>{verdict}（已验证：{tool}）</translation>
    </message>
    <message>
        <source>, {n} overridden by the tool</source>
        <translation>，{n} 项被工具覆盖</translation>
    </message>
    <message>
        <source>Findings for {where} ({n:,}{overridden}){verdict}</source>
        <translation>{where} 的发现（{n:,}{overridden}）{verdict}</translation>
    </message>
</context>
<context>
    <name>FixFlow</name>
    <message>
        <source>the optimizer (studio.optimize) is not available in this installation</source>
        <translation>此安装中没有优化器（studio.optimize）</translation>
    </message>
    <message>
        <source>install the optimize extra: {command}</source>
        <translation>请安装 optimize 附加组件：{command}</translation>
    </message>
    <message>
        <source>no dims to make static</source>
        <translation>没有要静态化的维度</translation>
    </message>
    <message>
        <source>enter a value for at least one dim, e.g. batch=1</source>
        <translation>请至少为一个维度输入值，例如 batch=1</translation>
    </message>
    <message>
        <source>running fix: {kind}…</source>
        <translation>正在执行修复：{kind}…</translation>
    </message>
    <message>
        <source>fix {kind}: {name}</source>
        <translation>修复 {kind}：{name}</translation>
    </message>
    <message>
        <source>&lt;p&gt;&lt;a href=&apos;studio:diff&apos;&gt;Compare the two graphs side by side (Diff page)&lt;/a&gt;&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;a href=&apos;studio:diff&apos;&gt;并排对比两个计算图（“对比”页面）&lt;/a&gt;&lt;/p&gt;</translation>
    </message>
    <message>
        <source>could not add {path} to the workspace: {error}</source>
        <translation>无法将 {path} 添加到工作区：{error}</translation>
    </message>
</context>
<context>
    <name>FleetPage</name>
    <message>
        <source>Fleet — staged rollouts to many agents, gated by live metrics</source>
        <translation>设备群 — 按实时指标把关、分阶段推送到多个代理</translation>
    </message>
    <message>
        <source>new fleet name</source>
        <translation>新设备群名称</translation>
    </message>
    <message>
        <source>fleet token file (optional)</source>
        <translation>设备群令牌文件（可选）</translation>
    </message>
    <message>
        <source>the management token file of agents that have none in Devices (kept by path)</source>
        <translation>在“设备”中没有令牌的代理所用的管理令牌文件（按路径保存）</translation>
    </message>
    <message>
        <source>Create</source>
        <translation>创建</translation>
    </message>
    <message>
        <source>Add connected agents</source>
        <translation>添加已连接的代理</translation>
    </message>
    <message>
        <source>every edge agent in Devices joins the fleet (its token file by reference)</source>
        <translation>“设备”中的每个边缘代理都加入设备群（按引用使用其令牌文件）</translation>
    </message>
    <message>
        <source>ring label (optional)</source>
        <translation>环标签（可选）</translation>
    </message>
    <message>
        <source>Fleet</source>
        <translation>设备群</translation>
    </message>
    <message>
        <source>signed bundle (.tar): the current model&apos;s newest by default</source>
        <translation>签名部署包（.tar）：默认为当前模型最新的部署包</translation>
    </message>
    <message>
        <source>rings: a count of agents or a percentage of the fleet, increasing; or &apos;rings&apos; for the fleet file&apos;s ring labels in order</source>
        <translation>环：代理数量或设备群的百分比，逐级递增；或填 &apos;rings&apos;，按设备群文件中环标签的顺序</translation>
    </message>
    <message>
        <source>Bundle</source>
        <translation>部署包</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation>计划</translation>
    </message>
    <message>
        <source>how long each ring is watched before it is promoted (500ms, 60s, 2m)</source>
        <translation>每个环在晋级前的观察时长（500ms、60s、2m）</translation>
    </message>
    <message>
        <source>Gate (SLA tier)</source>
        <translation>门限（SLA 等级）</translation>
    </message>
    <message>
        <source>Watch</source>
        <translation>观察</translation>
    </message>
    <message>
        <source>skip</source>
        <translation>跳过</translation>
    </message>
    <message>
        <source>block</source>
        <translation>阻塞等待</translation>
    </message>
    <message>
        <source>an agent that is down: skipped (reported), or the rollout blocks until it is back</source>
        <translation>离线的代理：跳过（并报告），或暂停推送直到它恢复</translation>
    </message>
    <message>
        <source> req/s</source>
        <translation> 请求/秒</translation>
    </message>
    <message>
        <source>probe requests per agent during the watch (0: only real traffic is judged)</source>
        <translation>观察期间每个代理的探测请求数（0：只评估真实流量）</translation>
    </message>
    <message>
        <source>Agent down</source>
        <translation>代理离线时</translation>
    </message>
    <message>
        <source>Probe traffic</source>
        <translation>探测流量</translation>
    </message>
    <message>
        <source>Start rollout</source>
        <translation>开始推送</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Abort and roll back</source>
        <translation>中止并回滚</translation>
    </message>
    <message>
        <source>No rollout yet.</source>
        <translation>尚无推送。</translation>
    </message>
    <message>
        <source>token file {path} does not exist</source>
        <translation>令牌文件 {path} 不存在</translation>
    </message>
    <message>
        <source>copy /etc/studio-agent/token from a board, or leave it empty</source>
        <translation>从开发板复制 /etc/studio-agent/token，或留空</translation>
    </message>
    <message>
        <source>no edge agent in Devices to add</source>
        <translation>“设备”中没有可添加的边缘代理</translation>
    </message>
    <message>
        <source>add or discover agents on the Devices page, then come back</source>
        <translation>请先在“设备”页面添加或发现代理，然后再回来</translation>
    </message>
    <message>
        <source> and {n} more (in bold below)</source>
        <translation> 及另外 {n} 个（见下方粗体）</translation>
    </message>
    <message>
        <source>Added 1 agent to fleet {fleet}: {agents}</source>
        <translation>已向设备群 {fleet} 添加 1 个代理：{agents}</translation>
    </message>
    <message>
        <source>Added {n} agents to fleet {fleet}: {agents}</source>
        <translation>已向设备群 {fleet} 添加 {n} 个代理：{agents}</translation>
    </message>
    <message>
        <source>No agent added to fleet {fleet}</source>
        <translation>未向设备群 {fleet} 添加代理</translation>
    </message>
    <message>
        <source>; {n} connected agents were already members</source>
        <translation>；{n} 个已连接的代理早已是成员</translation>
    </message>
    <message>
        <source>; 1 connected agent was already a member</source>
        <translation>；1 个已连接的代理早已是成员</translation>
    </message>
    <message>
        <source>{n} agent(s) added to fleet {fleet}</source>
        <translation>已向设备群 {fleet} 添加 {n} 个代理</translation>
    </message>
    <message>
        <source> ({n} already members)</source>
        <translation>（{n} 个早已是成员）</translation>
    </message>
    <message>
        <source>choose the bundle to roll out</source>
        <translation>请选择要推送的部署包</translation>
    </message>
    <message>
        <source>build one on the Package page, or Browse… for a .tar</source>
        <translation>请在“打包”页面构建一个，或通过“浏览…”选择 .tar</translation>
    </message>
    <message>
        <source>Roll out {bundle} to {fleet}</source>
        <translation>将 {bundle} 推送到 {fleet}</translation>
    </message>
    <message>
        <source>Resume rollout to {fleet}</source>
        <translation>继续向 {fleet} 推送</translation>
    </message>
    <message>
        <source>rollout to {fleet}: {status}</source>
        <translation>向 {fleet} 的推送：{status}</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#c62828&apos;&gt;{escape}&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#c62828&apos;&gt;{escape}&lt;/span&gt;</translation>
    </message>
    <message>
        <source>Fleet {fleet}: 1 member</source>
        <translation>设备群 {fleet}：1 个成员</translation>
    </message>
    <message>
        <source>Fleet {fleet}: {n} members</source>
        <translation>设备群 {fleet}：{n} 个成员</translation>
    </message>
    <message>
        <source>, {n} connected</source>
        <translation>，{n} 个已连接</translation>
    </message>
    <message>
        <source> — add the connected agents (Devices) with “Add connected agents”</source>
        <translation> — 用“添加已连接的代理”加入已连接的代理（设备）</translation>
    </message>
    <message>
        <source>Rollout of fleet &lt;b&gt;{fleet}&lt;/b&gt;: one row per agent it updates</source>
        <translation>设备群 &lt;b&gt;{fleet}&lt;/b&gt; 的推送：每个被更新的代理一行</translation>
    </message>
    <message>
        <source>No rollout yet for this fleet.</source>
        <translation>该设备群尚无推送。</translation>
    </message>
    <message>
        <source>Create a fleet, then add the connected agents to it.</source>
        <translation>创建一个设备群，然后把已连接的代理加入其中。</translation>
    </message>
    <message>
        <source>all rings</source>
        <translation>所有环</translation>
    </message>
    <message>
        <source>interrupted (the studio running it is gone): Resume goes on</source>
        <translation>已中断（运行它的 Studio 已退出）：点击“继续”可接着推送</translation>
    </message>
    <message>
        <source>&lt;b&gt;{bundle_name} {bundle_version}&lt;/b&gt; to {fleet}: {status} — ring {min}/{n} ({ring}), gate {tier}, watch {watch_s:g} s</source>
        <translation>&lt;b&gt;{bundle_name} {bundle_version}&lt;/b&gt; 推送到 {fleet}：{status} — 环 {min}/{n}（{ring}），门限 {tier}，观察 {watch_s:g} s</translation>
    </message>
    <message>
        <source>Bundle to roll out</source>
        <translation>要推送的部署包</translation>
    </message>
    <message>
        <source>Bundles (*.tar)</source>
        <translation>部署包 (*.tar)</translation>
    </message>
    <message>
        <source>no fleet chosen</source>
        <translation>未选择设备群</translation>
    </message>
    <message>
        <source>create one (name, Create) first</source>
        <translation>请先创建一个（名称，创建）</translation>
    </message>
    <message>
        <source>open a workspace first</source>
        <translation>请先打开一个工作区</translation>
    </message>
    <message>
        <source>(the device&apos;s / the fleet&apos;s)</source>
        <translation>（使用设备的 / 设备群的）</translation>
    </message>
    <message>
        <source>not in Devices</source>
        <translation>不在“设备”中</translation>
    </message>
</context>
<context>
    <name>FontNote</name>
    <message>
        <source>{n} character(s) in this model&apos;s names have no installed font and show as boxes ({shown}): {missing_font_hint}</source>
        <translation>该模型名称中有 {n} 个字符没有已安装的字体，显示为方框（{shown}）：{missing_font_hint}</translation>
    </message>
</context>
<context>
    <name>GenerationBox</name>
    <message>
        <source>Auto (on for decoders)</source>
        <translation>自动（解码器开启）</translation>
    </message>
    <message>
        <source>On</source>
        <translation>开</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>as exported</source>
        <translation>与导出时相同</translation>
    </message>
    <message>
        <source>half precision, judged against the FP32 part</source>
        <translation>半精度，与 FP32 部分对比评判</translation>
    </message>
    <message>
        <source>static INT8, calibrated on images from the model&apos;s processor</source>
        <translation>静态 INT8，用模型处理器的图像校准</translation>
    </message>
    <message>
        <source>dynamic INT8 (no calibration)</source>
        <translation>动态 INT8（无需校准）</translation>
    </message>
    <message>
        <source>Generation and precision</source>
        <translation>生成与精度</translation>
    </message>
    <message>
        <source>past_key_values inputs and present outputs: one graph serves prefill and each decode step, validated token by token against HF generate()</source>
        <translation>past_key_values 输入与 present 输出：一个计算图同时服务预填充和每个解码步，并逐 token 与 HF generate() 对比验证</translation>
    </message>
    <message>
        <source>float16 halves the cache&apos;s memory; the decoder&apos;s outputs are judged against the float32 cache</source>
        <translation>float16 使缓存内存减半；解码器的输出以 float32 缓存为基准评判</translation>
    </message>
    <message>
        <source>cache dtype</source>
        <translation>缓存数据类型</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Each part converted is judged against its FP32 self and falls back to FP32 alone when it misses its tolerance (the report says so).</source>
        <translation>每个被转换的部分都以其 FP32 版本为基准评判，超出容差时单独回退到 FP32（报告中会注明）。</translation>
    </message>
    <message>
        <source>on: the graph takes and returns the KV cache; the export is validated by greedy generation against HF generate(), and Try it / `studio generate` can run it</source>
        <translation>开启：计算图接收并返回 KV 缓存；导出结果通过与 HF generate() 对比的贪心生成来验证，并可用“试用”/ `studio generate` 运行</translation>
    </message>
    <message>
        <source>off: a single pass over the whole sequence (no generation)</source>
        <translation>关：对整个序列单次前向（不生成）</translation>
    </message>
</context>
<context>
    <name>GraphLegend</name>
    <message>
        <source>&lt;span style=&apos;color:{value}; font-size:12pt&apos;&gt;━&lt;/span&gt; dynamic&amp;nbsp;&lt;span style=&apos;color:{value}&apos;&gt;●&lt;/span&gt; source</source>
        <translation>&lt;span style=&apos;color:{value}; font-size:12pt&apos;&gt;━&lt;/span&gt; 动态&amp;nbsp;&lt;span style=&apos;color:{value}&apos;&gt;●&lt;/span&gt; 来源</translation>
    </message>
    <message>
        <source>━ an edge carrying a tensor with a dynamic dim; ● a node that produces one</source>
        <translation>━ 承载含动态维度张量的边；● 产生此类张量的节点</translation>
    </message>
    <message>
        <source>time per node</source>
        <translation>每节点耗时</translation>
    </message>
    <message>
        <source>0 ms</source>
        <translation>0 ms</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:{none}; font-size:12pt&apos;&gt;■&lt;/span&gt; no kernel time</source>
        <translation>&lt;span style=&apos;color:{none}; font-size:12pt&apos;&gt;■&lt;/span&gt; 无内核耗时</translation>
    </message>
    <message>
        <source>fused, constant-folded or removed by ONNX Runtime&apos;s optimizer: a fused node&apos;s time is counted on the node it was fused into</source>
        <translation>被 ONNX Runtime 优化器融合、常量折叠或移除：被融合节点的耗时计入其融合到的节点</translation>
    </message>
    <message>
        <source>{nodes:,} nodes · {edges:,} edges</source>
        <translation>{nodes:,} 个节点 · {edges:,} 条边</translation>
    </message>
    <message>
        <source>{text}; layout {seconds:.2f} s ({engine})</source>
        <translation>{text}；布局 {seconds:.2f} s（{engine}）</translation>
    </message>
</context>
<context>
    <name>GraphRollup</name>
    <message>
        <source>unsupported</source>
        <translation>不支持</translation>
    </message>
    <message>
        <source>risky</source>
        <translation>有风险</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>nodes</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>inputs</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>outputs</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>{n} dynamic</source>
        <translation>{n} 动态</translation>
    </message>
    <message>
        <source>removed</source>
        <translation>已移除</translation>
    </message>
    <message>
        <source>changed</source>
        <translation>已变更</translation>
    </message>
    <message>
        <source>shape only</source>
        <translation>仅形状</translation>
    </message>
    <message>
        <source>added</source>
        <translation>已新增</translation>
    </message>
    <message>
        <source>{group} (its own ops)</source>
        <translation>{group}（自身的算子）</translation>
    </message>
</context>
<context>
    <name>GraphSnippetView</name>
    <message>
        <source>no graph snippet for this failure</source>
        <translation>该故障没有计算图片段</translation>
    </message>
</context>
<context>
    <name>GraphToolbar</name>
    <message>
        <source>Search node, op type or tensor  (Enter: next match)</source>
        <translation>搜索节点、算子类型或张量（Enter：下一个匹配）</translation>
    </message>
    <message>
        <source>Previous match (Shift+Enter)</source>
        <translation>上一个匹配（Shift+Enter）</translation>
    </message>
    <message>
        <source>Next match (Enter)</source>
        <translation>下一个匹配（Enter）</translation>
    </message>
    <message>
        <source>Verdicts for the current target, or heat by a per-node measure: the profiled time of each node (run Profile first)</source>
        <translation>当前目标平台的判定，或按节点度量显示热度：每个节点的性能分析耗时（请先运行“性能分析”）</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>适应窗口</translation>
    </message>
    <message>
        <source>Show the whole graph (F)</source>
        <translation>显示整个计算图（F）</translation>
    </message>
    <message>
        <source>Groups ▾</source>
        <translation>分组 ▾</translation>
    </message>
    <message>
        <source>Nodes grouped by the module that made them (double-click a group to open it, double-click its box to close it; → and ← on the selection)</source>
        <translation>按生成节点的模块分组（双击分组展开，双击其方框折叠；对所选项使用 → 和 ←）</translation>
    </message>
    <message>
        <source>Group by module</source>
        <translation>按模块分组</translation>
    </message>
    <message>
        <source>Open all groups</source>
        <translation>展开所有分组</translation>
    </message>
    <message>
        <source>Close all groups</source>
        <translation>折叠所有分组</translation>
    </message>
    <message>
        <source>Open to depth {d}</source>
        <translation>展开到深度 {d}</translation>
    </message>
    <message>
        <source>Colour by node data (Model Explorer)…</source>
        <translation>按节点数据着色（Model Explorer）…</translation>
    </message>
    <message>
        <source>Export overlays as node data…</source>
        <translation>将叠加层导出为节点数据…</translation>
    </message>
    <message>
        <source>no match</source>
        <translation>无匹配</translation>
    </message>
</context>
<context>
    <name>GraphView</name>
    <message>
        <source>Open an ONNX model to see its graph</source>
        <translation>打开 ONNX 模型以查看其计算图</translation>
    </message>
    <message>
        <source>Laying out {n:,} nodes…</source>
        <translation>正在布局 {n:,} 个节点…</translation>
    </message>
    <message>
        <source>Layout failed: {message}</source>
        <translation>布局失败：{message}</translation>
    </message>
    <message>
        <source>verdict: {verdict}</source>
        <translation>判定：{verdict}</translation>
    </message>
    <message>
        <source>in</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>out</source>
        <translation>输出</translation>
    </message>
</context>
<context>
    <name>GroupDetails</name>
    <message>
        <source>group</source>
        <translation>分组</translation>
    </message>
    <message>
        <source>{n} nodes, {types} op types, {dyn} with dynamic outputs. Double-click the box to open it; its findings are selected below.</source>
        <translation>{n} 个节点，{types} 种算子，{dyn} 个带动态输出。双击该框可展开；其发现的问题已在下方选中。</translation>
    </message>
    <message>
        <source>Verdicts per target</source>
        <translation>各目标平台的判定</translation>
    </message>
    <message>
        <source>Operators</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>… {n} more op types</source>
        <translation>… 另有 {n} 种算子</translation>
    </message>
</context>
<context>
    <name>Hints</name>
    <message>
        <source>the override box</source>
        <translation>覆盖选项复选框</translation>
    </message>
    <message>
        <source>the Inspector&apos;s “Simplify” fix</source>
        <translation>检查器的“简化”修复</translation>
    </message>
    <message>
        <source>the Inspector&apos;s “Static dims…” fix</source>
        <translation>检查器的“静态维度…”修复</translation>
    </message>
    <message>
        <source>the Inspector&apos;s “FP16” fix</source>
        <translation>检查器的“FP16”修复</translation>
    </message>
    <message>
        <source>the Inspector&apos;s “INT8” fix</source>
        <translation>检查器的“INT8”修复</translation>
    </message>
    <message>
        <source>the Compile page&apos;s “Shapes” field</source>
        <translation>“编译”页面的“形状”字段</translation>
    </message>
    <message>
        <source>the export wizard&apos;s “Opset” (Options step)</source>
        <translation>“导出”页面的“Opset”（“选项”步骤）</translation>
    </message>
    <message>
        <source>the export wizard&apos;s “Exporter” (Options step)</source>
        <translation>“导出”页面的“导出器”（“选项”步骤）</translation>
    </message>
    <message>
        <source>the export wizard&apos;s Signature step</source>
        <translation>“导出”页面的“签名”步骤</translation>
    </message>
    <message>
        <source>the export wizard&apos;s “Absolute tolerance”</source>
        <translation>“导出”页面的“绝对容差”</translation>
    </message>
    <message>
        <source>the export wizard&apos;s “Relative tolerance”</source>
        <translation>“导出”页面的“相对容差”</translation>
    </message>
    <message>
        <source>the Package page&apos;s “Board”</source>
        <translation>“打包”页面的“开发板”</translation>
    </message>
    <message>
        <source>the Package page&apos;s “Version”</source>
        <translation>“打包”页面的“版本”</translation>
    </message>
    <message>
        <source>the Package page&apos;s “Signing key”</source>
        <translation>“打包”页面的“签名密钥”</translation>
    </message>
    <message>
        <source>the agent&apos;s token file field (Edge agents)</source>
        <translation>代理的令牌文件字段（“边缘代理”）</translation>
    </message>
    <message>
        <source>the workspace&apos;s targets/ folder</source>
        <translation>工作区的 targets/ 文件夹</translation>
    </message>
    <message>
        <source>the “Output” field</source>
        <translation>“输出”字段</translation>
    </message>
    <message>
        <source>“Package even if the board check fails”</source>
        <translation>“即使开发板检查失败也打包”</translation>
    </message>
    <message>
        <source>“Public key…” → “Push to agent” (or the agent&apos;s trust file)</source>
        <translation>“公钥…” → “推送到代理”（或代理的信任文件）</translation>
    </message>
    <message>
        <source>“Replace an existing output folder”</source>
        <translation>“替换已有的输出文件夹”</translation>
    </message>
    <message>
        <source>the “Version” field</source>
        <translation>“版本”字段</translation>
    </message>
    <message>
        <source>the “Name” field</source>
        <translation>“名称”字段</translation>
    </message>
    <message>
        <source>the “ONNX file” field (Options step)</source>
        <translation>“ONNX 文件”字段（“选项”步骤）</translation>
    </message>
    <message>
        <source>the “Prompt” field</source>
        <translation>“提示词”字段</translation>
    </message>
    <message>
        <source>the “Image” field</source>
        <translation>“图像”字段</translation>
    </message>
    <message>
        <source>the “Audio” field</source>
        <translation>“音频”字段</translation>
    </message>
    <message>
        <source>“Max new tokens”</source>
        <translation>“最大新 token 数”</translation>
    </message>
</context>
<context>
    <name>InferenceForm</name>
    <message>
        <source>{ms} ms round trip</source>
        <translation>往返 {ms} ms</translation>
    </message>
    <message>
        <source> (inputs prepared in {ms} ms)</source>
        <translation>（输入准备用时 {ms} ms）</translation>
    </message>
    <message>
        <source>inputs:</source>
        <translation>输入：</translation>
    </message>
    <message>
        <source>  {name}: shape {shape} {dtype}</source>
        <translation>  {name}：形状 {shape} {dtype}</translation>
    </message>
    <message>
        <source>outputs:</source>
        <translation>输出：</translation>
    </message>
    <message>
        <source>inputs prepared in {ms} ms</source>
        <translation>输入准备用时 {ms} ms</translation>
    </message>
    <message>
        <source>best label “{label}” {percent} %</source>
        <translation>最佳标签“{label}” {percent} %</translation>
    </message>
    <message>
        <source>text (tokenised with the tokenizer below, or sent as BYTES); a zero-shot model (CLIP, SigLIP): the labels, separated by commas</source>
        <translation>文本（用下面的分词器分词，或以 BYTES 发送）；零样本模型（CLIP、SigLIP）：以逗号分隔的标签</translation>
    </message>
    <message>
        <source>For a model that outputs logits_per_image (CLIP-class), each comma-separated label is one text of the request and the result shows their scores (softmax) as bars.</source>
        <translation>对于输出 logits_per_image 的模型（CLIP 类），每个逗号分隔的标签是请求中的一条文本，结果以条形图显示它们的得分（softmax）。</translation>
    </message>
    <message>
        <source>image file</source>
        <translation>图像文件</translation>
    </message>
    <message>
        <source>Images (*.png *.jpg *.jpeg *.bmp)</source>
        <translation>图像 (*.png *.jpg *.jpeg *.bmp)</translation>
    </message>
    <message>
        <source>audio file</source>
        <translation>音频文件</translation>
    </message>
    <message>
        <source>Audio (*.wav *.npy)</source>
        <translation>音频 (*.wav *.npy)</translation>
    </message>
    <message>
        <source>tokenizer.json (for models taking token ids)</source>
        <translation>tokenizer.json（用于接收 token id 的模型）</translation>
    </message>
    <message>
        <source>preprocessor_config.json / processor_config.json (image mean/std)</source>
        <translation>preprocessor_config.json / processor_config.json（图像均值/标准差）</translation>
    </message>
    <message>
        <source>Run inference</source>
        <translation>运行推理</translation>
    </message>
    <message>
        <source>Generate (stream)</source>
        <translation>生成（流式）</translation>
    </message>
    <message>
        <source>the generate extension (generate_stream): the Text field is the prompt, the image or audio goes with it; the answer streams in with its tokens/s</source>
        <translation>generate 扩展（generate_stream）：“文本”字段是提示词，图像或音频随之发送；回答以流式返回并显示 tokens/s</translation>
    </message>
    <message>
        <source>max tokens </source>
        <translation>最大 token 数 </translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>图像</translation>
    </message>
    <message>
        <source>Audio</source>
        <translation>音频</translation>
    </message>
    <message>
        <source>Tokenizer</source>
        <translation>分词器</translation>
    </message>
    <message>
        <source>Processor</source>
        <translation>处理器</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Outputs</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>&apos;{model}&apos; is not a generation model: use Run inference.
(Its metadata lists no generate loop; a decoder exported with its KV cache has one.)</source>
        <translation>“{model}”不是生成模型：请使用“运行推理”。
（其元数据中没有生成循环；带 KV 缓存导出的解码器才有。）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Generating&lt;/b&gt;: the answer streams into Outputs</source>
        <translation>&lt;b&gt;生成中&lt;/b&gt;：回答将流式输出到“输出”</translation>
    </message>
    <message>
        <source>&lt;b&gt;{tokens} tokens&lt;/b&gt; ({value}) · time to first token {ttft} · {tokens_per_s:.1f} tokens/s · {total_ms:.0f} ms in all</source>
        <translation>&lt;b&gt;{tokens} 个 token&lt;/b&gt;（{value}）· 首 token 时间 {ttft} · {tokens_per_s:.1f} tokens/s · 共 {total_ms:.0f} ms</translation>
    </message>
    <message>
        <source>done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>{tokens} tokens ({reason}) · TTFT {ttft} · {rate} tokens/s · {total} ms in all</source>
        <translation>{tokens} 个 token（{reason}）· TTFT {ttft} · {rate} tokens/s · 共 {total} ms</translation>
    </message>
</context>
<context>
    <name>InspectHeader</name>
    <message>
        <source>Inspector</source>
        <translation>检查器</translation>
    </message>
    <message>
        <source>no model</source>
        <translation>无模型</translation>
    </message>
    <message>
        <source>Open…</source>
        <translation>打开…</translation>
    </message>
    <message>
        <source>open an ONNX model (or an export folder) in the Inspector</source>
        <translation>在检查器中打开 ONNX 模型（或导出文件夹）</translation>
    </message>
    <message>
        <source>Re-inspect</source>
        <translation>重新检查</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>性能分析</translation>
    </message>
    <message>
        <source>per-node times with ONNX Runtime&apos;s profiler: heat colours on the graph, the slowest nodes in the Profile tab (saved with the workspace)</source>
        <translation>用 ONNX Runtime 性能分析器测量每个节点的耗时：在计算图上以热度着色，最慢的节点列在“性能分析”标签页（随工作区保存）</translation>
    </message>
    <message>
        <source>Compile</source>
        <translation>编译</translation>
    </message>
    <message>
        <source>open this model on the Compile page, for the board of the current target</source>
        <translation>在“编译”页面打开该模型，面向当前目标平台的开发板</translation>
    </message>
    <message>
        <source>Serve</source>
        <translation>部署服务</translation>
    </message>
    <message>
        <source>serve this model on Triton: build a model repository from it on the Triton page</source>
        <translation>在 Triton 上部署该模型：在 Triton 页面用它构建模型仓库</translation>
    </message>
</context>
<context>
    <name>InspectPage</name>
    <message>
        <source>Graph</source>
        <translation>计算图</translation>
    </message>
    <message>
        <source>Netron</source>
        <translation>Netron</translation>
    </message>
    <message>
        <source>Open ONNX model</source>
        <translation>打开 ONNX 模型</translation>
    </message>
    <message>
        <source>ONNX models (*.onnx);;All files (*)</source>
        <translation>ONNX 模型 (*.onnx);;所有文件 (*)</translation>
    </message>
    <message>
        <source>load graph {name}</source>
        <translation>加载计算图 {name}</translation>
    </message>
    <message>
        <source>inspecting…</source>
        <translation>正在检查…</translation>
    </message>
    <message>
        <source>inspect {name}</source>
        <translation>检查 {name}</translation>
    </message>
    <message>
        <source>inspected in {get:.2f} s</source>
        <translation>检查完成，用时 {get:.2f} s</translation>
    </message>
    <message>
        <source>no .onnx file in folder {path}</source>
        <translation>文件夹 {path} 中没有 .onnx 文件</translation>
    </message>
    <message>
        <source>choose the exported .onnx file, or export the model first</source>
        <translation>请选择导出的 .onnx 文件，或先导出模型</translation>
    </message>
    <message>
        <source>model file not found: {path}</source>
        <translation>找不到模型文件：{path}</translation>
    </message>
    <message>
        <source>check the path</source>
        <translation>请检查路径</translation>
    </message>
    <message>
        <source>reading {name}</source>
        <translation>正在读取 {name}</translation>
    </message>
    <message>
        <source>cannot read {name} as an ONNX model: {error}</source>
        <translation>无法将 {name} 作为 ONNX 模型读取：{error}</translation>
    </message>
    <message>
        <source>is the file complete and really an .onnx model?</source>
        <translation>文件是否完整且确实是 .onnx 模型？</translation>
    </message>
    <message>
        <source>inferring shapes for the graph labels</source>
        <translation>正在为计算图标签推断形状</translation>
    </message>
    <message>
        <source>shape inference failed ({error}); showing declared shapes only</source>
        <translation>形状推断失败（{error}）；仅显示声明的形状</translation>
    </message>
    <message>
        <source>building the graph</source>
        <translation>正在构建计算图</translation>
    </message>
</context>
<context>
    <name>Inspector</name>
    <message>
        <source>Colour: {label}</source>
        <translation>着色：{label}</translation>
    </message>
    <message>
        <source>time per node</source>
        <translation>每节点耗时</translation>
    </message>
    <message>
        <source>Static dims…</source>
        <translation>静态维度…</translation>
    </message>
    <message>
        <source>fix chosen dims (batch=1, sequence=64) and re-infer shapes</source>
        <translation>固定所选维度（batch=1, sequence=64）并重新推断形状</translation>
    </message>
    <message>
        <source>Simplify</source>
        <translation>简化</translation>
    </message>
    <message>
        <source>fold constants and simplify with onnxslim</source>
        <translation>折叠常量并用 onnxslim 简化</translation>
    </message>
    <message>
        <source>convert weights and compute to float16 (parity checked)</source>
        <translation>将权重和计算转换为 float16（校验一致性）</translation>
    </message>
    <message>
        <source>dynamic INT8 quantization (parity checked)</source>
        <translation>动态 INT8 量化（校验一致性）</translation>
    </message>
    <message>
        <source>Colour: verdict</source>
        <translation>着色：判定</translation>
    </message>
    <message>
        <source>Colour: heat</source>
        <translation>着色：热度</translation>
    </message>
    <message>
        <source>Colour: time (profile)</source>
        <translation>着色：耗时（性能分析）</translation>
    </message>
</context>
<context>
    <name>JobRow</name>
    <message>
        <source>starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>succeeded</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Ask the job to stop at its next safe point</source>
        <translation>让任务在下一个安全点停止</translation>
    </message>
    <message>
        <source>Open report</source>
        <translation>打开报告</translation>
    </message>
    <message>
        <source>running  {pct}%</source>
        <translation>运行中  {pct}%</translation>
    </message>
    <message>
        <source>stage {i} of {n}: {name}, {pct}% done</source>
        <translation>阶段 {i}/{n}：{name}，已完成 {pct}%</translation>
    </message>
    <message>
        <source>finished: failed</source>
        <translation>已结束：失败</translation>
    </message>
    <message>
        <source>done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
</context>
<context>
    <name>JobsPanel</name>
    <message>
        <source>Clear finished</source>
        <translation>清除已完成</translation>
    </message>
    <message>
        <source>No jobs yet. Exports, inspections and builds show their progress here.</source>
        <translation>暂无任务。导出、检查和构建的进度会显示在这里。</translation>
    </message>
    <message>
        <source>{running} running, {finished} finished</source>
        <translation>{running} 个运行中，{finished} 个已结束</translation>
    </message>
    <message>
        <source>unexpected {error}</source>
        <translation>意外错误 {error}</translation>
    </message>
    <message>
        <source>this is a bug in the studio; the raw log has the traceback</source>
        <translation>这是 Studio 的缺陷；原始日志中有回溯信息</translation>
    </message>
</context>
<context>
    <name>Layout</name>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
</context>
<context>
    <name>LoadRuns</name>
    <message>
        <source>cannot read levels {text}</source>
        <translation>无法读取级别 {text}</translation>
    </message>
    <message>
        <source>concurrency: 1,2,4 — rate: requests per second, e.g. 100</source>
        <translation>并发：1,2,4 — 速率：每秒请求数，例如 100</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>不适用</translation>
    </message>
    <message>
        <source>pass</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>fail</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>SLA {tier} {verdict}: {passed} of {judged} judged windows passed ({pct}; {required} % required)</source>
        <translation>SLA {tier} {verdict}：已评判的 {judged} 个窗口中 {passed} 个通过（{pct}；要求 {required} %）</translation>
    </message>
    <message>
        <source>not measured</source>
        <translation>未测量</translation>
    </message>
    <message>
        <source>budget: {limits}</source>
        <translation>预算：{limits}</translation>
    </message>
    <message>
        <source>none set</source>
        <translation>未设置</translation>
    </message>
    <message>
        <source>{measure} {median} &gt; {limit} in {n} of {judged} windows (worst {worst})</source>
        <translation>{measure} {median} &gt; {limit}，{judged} 个窗口中有 {n} 个（最差 {worst}）</translation>
    </message>
    <message>
        <source>why: {reasons}</source>
        <translation>原因：{reasons}</translation>
    </message>
    <message>
        <source>why: every judged measure was within its budget</source>
        <translation>原因：所有评判的指标都在预算之内</translation>
    </message>
    <message>
        <source>why: no window could be judged</source>
        <translation>原因：没有可评判的窗口</translation>
    </message>
    <message>
        <source>not judged: {measures}</source>
        <translation>未评判：{measures}</translation>
    </message>
    <message>
        <source>{throughput}, p99 {p99}, errors {errors}</source>
        <translation>{throughput}，p99 {p99}，错误 {errors}</translation>
    </message>
    <message>
        <source>TTFT p95 {ttft}, inter-token p95 {itl}, {rate} output tok/s</source>
        <translation>TTFT p95 {ttft}，token 间隔 p95 {itl}，输出 {rate} tok/s</translation>
    </message>
    <message>
        <source>recorded: {path}</source>
        <translation>已录制：{path}</translation>
    </message>
    <message>
        <source>Load {target}</source>
        <translation>压测 {target}</translation>
    </message>
</context>
<context>
    <name>LogPanel</name>
    <message>
        <source>add model</source>
        <translation>添加模型</translation>
    </message>
    <message>
        <source>compile</source>
        <translation>编译</translation>
    </message>
    <message>
        <source>deploy</source>
        <translation>部署</translation>
    </message>
    <message>
        <source>inspector</source>
        <translation>检查器</translation>
    </message>
    <message>
        <source>jobs</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>package</source>
        <translation>打包</translation>
    </message>
    <message>
        <source>settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>studio</source>
        <translation>Studio</translation>
    </message>
    <message>
        <source>triton check</source>
        <translation>Triton 检查</translation>
    </message>
    <message>
        <source>triton serve</source>
        <translation>Triton 服务</translation>
    </message>
    <message>
        <source>workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>Clear log</source>
        <translation>清空日志</translation>
    </message>
    <message>
        <source>Problem</source>
        <translation>问题</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Location</source>
        <translation>位置</translation>
    </message>
    <message>
        <source>Clear problems</source>
        <translation>清空问题</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>Problems</source>
        <translation>问题</translation>
    </message>
    <message>
        <source>hint: {hint}</source>
        <translation>提示：{hint}</translation>
    </message>
    <message>
        <source>click to open it in {page}</source>
        <translation>点击在 {page} 页面中打开</translation>
    </message>
    <message>
        <source>Problems ({n})</source>
        <translation>问题（{n}）</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>{page} failed to load:
{error}</source>
        <translation>{page} 加载失败：
{error}</translation>
    </message>
    <message>
        <source>{page} page failed to load: {error}</source>
        <translation>{page} 页面加载失败：{error}</translation>
    </message>
    <message>
        <source>see {module}</source>
        <translation>见 {module}</translation>
    </message>
    <message>
        <source>Jobs</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Log / Problems</source>
        <translation>日志 / 问题</translation>
    </message>
    <message>
        <source>{page} page failed to update: {error}</source>
        <translation>{page} 页面更新失败：{error}</translation>
    </message>
    <message>
        <source>could not save settings: {error}</source>
        <translation>无法保存设置：{error}</translation>
    </message>
    <message>
        <source>cancelling {n} job(s)…</source>
        <translation>正在取消 {n} 个任务…</translation>
    </message>
    <message>
        <source>{page} page shutdown failed: {error}</source>
        <translation>{page} 页面关闭失败：{error}</translation>
    </message>
    <message>
        <source>Language: {name}</source>
        <translation>语言：{name}</translation>
    </message>
    <message>
        <source>Language set to {name}: restart to apply (jobs are running; the pages switch once no job runs)</source>
        <translation>语言已设为 {name}：重启后生效（有任务正在运行；没有任务运行时再切换页面）</translation>
    </message>
    <message>
        <source>View &gt; Language, or `make translations`</source>
        <translation>视图 &gt; 语言，或 `make translations`</translation>
    </message>
    <message>
        <source>{title}  (error)</source>
        <translation>{title}  （错误）</translation>
    </message>
    <message>
        <source>Light theme</source>
        <translation>浅色主题</translation>
    </message>
    <message>
        <source>Dark theme</source>
        <translation>深色主题</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>New workspace…</source>
        <translation>新建工作区…</translation>
    </message>
    <message>
        <source>Open workspace…</source>
        <translation>打开工作区…</translation>
    </message>
    <message>
        <source>Recent workspaces</source>
        <translation>最近的工作区</translation>
    </message>
    <message>
        <source>Add model folder…</source>
        <translation>添加模型文件夹…</translation>
    </message>
    <message>
        <source>Add ONNX file…</source>
        <translation>添加 ONNX 文件…</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>Toggle theme</source>
        <translation>切换主题</translation>
    </message>
    <message>
        <source>Plugins…</source>
        <translation>插件…</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>About Deployment Studio</source>
        <translation>关于 Deployment Studio</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>opened from another launch (pid {pid}): {paths}</source>
        <translation>由另一次启动打开（pid {pid}）：{paths}</translation>
    </message>
    <message>
        <source>nothing</source>
        <translation>无</translation>
    </message>
</context>
<context>
    <name>NetronView</name>
    <message>
        <source>QtWebEngine is not available: {error}</source>
        <translation>QtWebEngine 不可用：{error}</translation>
    </message>
    <message>
        <source>the netron package is not installed ({command})</source>
        <translation>未安装 netron 软件包（{command}）</translation>
    </message>
    <message>
        <source>Netron shows the model here once one is open.</source>
        <translation>打开模型后，Netron 会在此显示它。</translation>
    </message>
    <message>
        <source>QtWebEngine could not start: {error}</source>
        <translation>QtWebEngine 无法启动：{error}</translation>
    </message>
    <message>
        <source>The Netron tab is unavailable.
{problem}

The native graph view has the same verdicts, selection and search.</source>
        <translation>Netron 标签页不可用。
{problem}

原生计算图视图具有相同的判定、选择和搜索功能。</translation>
    </message>
    <message>
        <source>could not start the Netron server: {error}</source>
        <translation>无法启动 Netron 服务器：{error}</translation>
    </message>
    <message>
        <source>Netron is laying out {name}…</source>
        <translation>Netron 正在布局 {name}…</translation>
    </message>
    <message>
        <source>Netron did not load from {url}</source>
        <translation>Netron 未能从 {url} 加载</translation>
    </message>
    <message>
        <source>the QtWebEngine render process stopped ({status}, code {code})</source>
        <translation>QtWebEngine 渲染进程已停止（{status}，代码 {code}）</translation>
    </message>
    <message>
        <source>The Netron tab is unavailable.
{why}</source>
        <translation>Netron 标签页不可用。
{why}</translation>
    </message>
</context>
<context>
    <name>NodeDataFlow</name>
    <message>
        <source>reading {name}</source>
        <translation>正在读取 {name}</translation>
    </message>
    <message>
        <source>Model Explorer node data</source>
        <translation>Model Explorer 节点数据</translation>
    </message>
    <message>
        <source>Node data (*.json);;All files (*)</source>
        <translation>节点数据 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>open a model first</source>
        <translation>请先打开一个模型</translation>
    </message>
    <message>
        <source>node data colours the nodes of the model shown</source>
        <translation>节点数据为当前显示模型的节点着色</translation>
    </message>
    <message>
        <source>node data {name}</source>
        <translation>节点数据 {name}</translation>
    </message>
    <message>
        <source> ({n} ids name no node of this model)</source>
        <translation>（{n} 个 id 不对应此模型的任何节点）</translation>
    </message>
    <message>
        <source>the node data holds no numbers and no verdict words to colour by</source>
        <translation>节点数据中没有可用于着色的数值或判定词</translation>
    </message>
    <message>
        <source>load a file written by `studio inspect --node-data` or one with numeric values</source>
        <translation>请加载由 `studio inspect --node-data` 写出的文件，或含数值的文件</translation>
    </message>
    <message>
        <source>node data &apos;{name}&apos;: {n} nodes coloured</source>
        <translation>节点数据“{name}”：已为 {n} 个节点着色</translation>
    </message>
    <message>
        <source>nothing to export yet: the model is not inspected</source>
        <translation>暂无可导出内容：模型尚未检查</translation>
    </message>
    <message>
        <source>wait for the inspection to finish</source>
        <translation>请等待检查完成</translation>
    </message>
    <message>
        <source>Export overlays as Model Explorer node data</source>
        <translation>将叠加层导出为 Model Explorer 节点数据</translation>
    </message>
    <message>
        <source>Node data (*.json)</source>
        <translation>节点数据 (*.json)</translation>
    </message>
    <message>
        <source>export node data {name}</source>
        <translation>导出节点数据 {name}</translation>
    </message>
    <message>
        <source>wrote node data: {files}</source>
        <translation>已写出节点数据：{files}</translation>
    </message>
</context>
<context>
    <name>OpenSSFBox</name>
    <message>
        <source>PEM files (*.pem *.pub *.crt);;All files (*)</source>
        <translation>PEM 文件 (*.pem *.pub *.crt);;所有文件 (*)</translation>
    </message>
    <message>
        <source>OpenSSF model signing (optional)</source>
        <translation>OpenSSF 模型签名（可选）</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <source>verify the source folder&apos;s OpenSSF signature against the trusted key</source>
        <translation>用受信任的密钥验证源文件夹的 OpenSSF 签名</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>publisher&apos;s public key or CA certificate (PEM)</source>
        <translation>发布者的公钥或 CA 证书（PEM）</translation>
    </message>
    <message>
        <source>a source arriving with an OpenSSF signature is checked against this before it is packaged; a mismatch stops the build and names the file</source>
        <translation>附带 OpenSSF 签名的来源在打包前会用它验证；不匹配时停止构建并指出文件</translation>
    </message>
    <message>
        <source>Trusted</source>
        <translation>受信任</translation>
    </message>
    <message>
        <source>Trusted key</source>
        <translation>受信任的密钥</translation>
    </message>
    <message>
        <source>ECDSA private key (PEM) to also sign model/ (model.sig)</source>
        <translation>同时用于签名 model/ 的 ECDSA 私钥（PEM）（model.sig）</translation>
    </message>
    <message>
        <source>`model_signing verify key` accepts the bundle&apos;s model/ with its public half; an encrypted key reads STUDIO_OPENSSF_KEY_PASSWORD</source>
        <translation>`model_signing verify key` 可用其公钥验证部署包的 model/；加密的私钥从 STUDIO_OPENSSF_KEY_PASSWORD 读取密码</translation>
    </message>
    <message>
        <source>Sign with</source>
        <translation>签名密钥</translation>
    </message>
    <message>
        <source>Signing key</source>
        <translation>签名密钥</translation>
    </message>
    <message>
        <source>no OpenSSF signature with this source</source>
        <translation>该来源没有附带 OpenSSF 签名</translation>
    </message>
    <message>
        <source>{name}: {n} files signed by {signer}; not checked yet</source>
        <translation>{name}：{n} 个文件由 {signer} 签名；尚未检查</translation>
    </message>
    <message>
        <source>choose the publisher&apos;s public key (or CA certificate) under Trusted, then Check</source>
        <translation>在“受信任”中选择发布者的公钥（或 CA 证书），然后点击“检查”</translation>
    </message>
    <message>
        <source>checking…</source>
        <translation>正在检查…</translation>
    </message>
    <message>
        <source>Check the OpenSSF signature of {name}</source>
        <translation>检查 {name} 的 OpenSSF 签名</translation>
    </message>
    <message>
        <source>✔ {files} files signed by {signer} (trusted: {name})</source>
        <translation>✔ {files} 个文件由 {signer} 签名（受信任：{name}）</translation>
    </message>
</context>
<context>
    <name>OptimizeDialog</name>
    <message>
        <source>Optimize for a target</source>
        <translation>针对目标平台优化</translation>
    </message>
    <message>
        <source>cosine&gt;=C, max-abs&lt;=X or top1-agree&gt;=P against the FP32 original</source>
        <translation>相对 FP32 原始模型：cosine&gt;=C、max-abs&lt;=X 或 top1-agree&gt;=P</translation>
    </message>
    <message>
        <source>images / texts / .wav / .npz (empty: seeded synthetic samples, warned)</source>
        <translation>图像 / 文本 / .wav / .npz（留空：使用固定种子的合成样本，并给出警告）</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>default: WORKSPACE/optimized/NAME-TARGET</source>
        <translation>默认：WORKSPACE/optimized/NAME-TARGET</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标平台</translation>
    </message>
    <message>
        <source>Budget</source>
        <translation>精度预算</translation>
    </message>
    <message>
        <source>Objective</source>
        <translation>优化目标</translation>
    </message>
    <message>
        <source>Calibration</source>
        <translation>校准</translation>
    </message>
    <message>
        <source>Time limit</source>
        <translation>时间限制</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Optimize</source>
        <translation>优化</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Use this</source>
        <translation>使用此项</translation>
    </message>
    <message>
        <source>make the chosen variant the current model (Inspect, Compile, Package)</source>
        <translation>将所选变体设为当前模型（检查、编译、打包）</translation>
    </message>
    <message>
        <source>Model: {model}</source>
        <translation>模型：{model}</translation>
    </message>
    <message>
        <source>{target} (unavailable)</source>
        <translation>{target}（不可用）</translation>
    </message>
    <message>
        <source>Calibration samples</source>
        <translation>校准样本</translation>
    </message>
    <message>
        <source>CLI: {command}</source>
        <translation>命令行：{command}</translation>
    </message>
    <message>
        <source>optimizing {name} for {target}…</source>
        <translation>正在针对 {target} 优化 {name}…</translation>
    </message>
    <message>
        <source>optimize {name} for {target}</source>
        <translation>针对 {target} 优化 {name}</translation>
    </message>
    <message>
        <source>cancelling: stopping the workers and the tools they started…</source>
        <translation>正在取消：停止工作进程及其启动的工具…</translation>
    </message>
    <message>
        <source>cancelled: nothing written</source>
        <translation>已取消：未写入任何内容</translation>
    </message>
    <message>
        <source>budget met</source>
        <translation>满足预算</translation>
    </message>
    <message>
        <source>budget NOT met (the best candidate is written; see what blocks it)</source>
        <translation>未满足预算（已写出最佳候选；请查看阻碍原因）</translation>
    </message>
    <message>
        <source> (cached result)</source>
        <translation>（缓存结果）</translation>
    </message>
    <message>
        <source>warning: {warning}</source>
        <translation>警告：{warning}</translation>
    </message>
    <message>
        <source>hint: {hint}</source>
        <translation>提示：{hint}</translation>
    </message>
    <message>
        <source>Use the chosen {candidate}</source>
        <translation>使用所选的 {candidate}</translation>
    </message>
    <message>
        <source>only the chosen variant of each part is written; this candidate&apos;s recipe is in the details</source>
        <translation>每个部分只写出所选变体；该候选的配方见详情</translation>
    </message>
    <message>
        <source>make this variant the current model (Inspect, Compile, Package)</source>
        <translation>将此变体设为当前模型（检查、编译、打包）</translation>
    </message>
    <message>
        <source>{metric} {value} on {n} sample(s) [{by}]</source>
        <translation>{metric} {value}，基于 {n} 个样本 [{by}]</translation>
    </message>
    <message>
        <source>tool verdict: {verdict} [{by}], size {size} [{size_by}]</source>
        <translation>工具判定：{verdict} [{by}]，大小 {size} [{size_by}]</translation>
    </message>
    <message>
        <source>host latency {ms} ms [{by}]</source>
        <translation>主机延迟 {ms} ms [{by}]</translation>
    </message>
    <message>
        <source>blocking: {node}: {rule}: {message} [{tool}]</source>
        <translation>阻碍：{node}：{rule}：{message} [{tool}]</translation>
    </message>
    <message>
        <source>(model)</source>
        <translation>（模型）</translation>
    </message>
    <message>
        <source>recipe:</source>
        <translation>配方：</translation>
    </message>
    <message>
        <source>the chosen variant&apos;s file is not there</source>
        <translation>所选变体的文件不存在</translation>
    </message>
    <message>
        <source>could not add {path} to the workspace: {error}</source>
        <translation>无法将 {path} 添加到工作区：{error}</translation>
    </message>
    <message>
        <source>now the current model: {path}</source>
        <translation>现在的当前模型：{path}</translation>
    </message>
</context>
<context>
    <name>OptimizeFlow</name>
    <message>
        <source>Optimize…</source>
        <translation>优化…</translation>
    </message>
    <message>
        <source>search fixes and precisions for the variant the target&apos;s own tool builds within an accuracy budget
CLI: studio optimize MODEL --target ID --budget cosine&gt;=0.99</source>
        <translation>在精度预算内搜索修复与精度组合，找到目标平台自带工具能构建的变体
CLI: studio optimize MODEL --target ID --budget cosine&gt;=0.99</translation>
    </message>
</context>
<context>
    <name>OptionsStep</name>
    <message>
        <source>torch.onnx.export tracing: fast; fails on some newer attention ops (GQA scaled_dot_product_attention)</source>
        <translation>torch.onnx.export 追踪：速度快；对部分较新的注意力算子会失败（GQA scaled_dot_product_attention）</translation>
    </message>
    <message>
        <source>torch.export based: slower, handles newer models such as Qwen2-VL</source>
        <translation>基于 torch.export：较慢，可处理 Qwen2-VL 等较新的模型</translation>
    </message>
    <message>
        <source>Where to write the model and how to export it. Every export is validated: full onnx.checker, shape inference and ONNX Runtime parity against PyTorch on random inputs, one of them with batch and sequence lengths different from the traced ones.</source>
        <translation>模型的写入位置和导出方式。每次导出都会经过验证：完整的 onnx.checker、形状推断，以及在随机输入上与 PyTorch 对比的 ONNX Runtime 一致性检查，其中一组输入的批大小和序列长度与追踪时不同。</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>ONNX file</source>
        <translation>ONNX 文件</translation>
    </message>
    <message>
        <source>Tokenizer, processor and config files, per-modality parts and the report are written next to it.</source>
        <translation>分词器、处理器和配置文件、各模态的子图以及报告都会写在它旁边。</translation>
    </message>
    <message>
        <source>Exporter</source>
        <translation>导出器</translation>
    </message>
    <message>
        <source>ONNX opset of the exported graph; targets constrain it (see Inspect)</source>
        <translation>导出计算图的 ONNX opset；目标平台会限制它（见“检查”）</translation>
    </message>
    <message>
        <source>Split modalities</source>
        <translation>拆分模态</translation>
    </message>
    <message>
        <source>Separate vision / text / audio encoder graphs plus the fusion part, each valid on its own, so a server can skip encoders a request does not need.</source>
        <translation>分别生成视觉 / 文本 / 音频编码器计算图以及融合部分，每个都可单独使用，这样服务器可以跳过请求不需要的编码器。</translation>
    </message>
    <message>
        <source>Opset</source>
        <translation>Opset</translation>
    </message>
    <message>
        <source>Dynamic axes</source>
        <translation>动态轴</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>验证</translation>
    </message>
    <message>
        <source>Absolute tolerance</source>
        <translation>绝对容差</translation>
    </message>
    <message>
        <source>Relative tolerance</source>
        <translation>相对容差</translation>
    </message>
    <message>
        <source>Random input cases</source>
        <translation>随机输入用例数</translation>
    </message>
    <message>
        <source>Equivalent command:</source>
        <translation>等效命令：</translation>
    </message>
    <message>
        <source>all input shapes are static in the signature</source>
        <translation>签名中所有输入形状都是静态的</translation>
    </message>
    <message>
        <source>needs inputs of more than one modality</source>
        <translation>需要多于一种模态的输入</translation>
    </message>
    <message>
        <source>Export to</source>
        <translation>导出到</translation>
    </message>
    <message>
        <source>ONNX models (*.onnx)</source>
        <translation>ONNX 模型 (*.onnx)</translation>
    </message>
    <message>
        <source>{what} must be a number, like 1e-4</source>
        <translation>{what} 必须是数字，例如 1e-4</translation>
    </message>
    <message>
        <source>{what} must be between 0 and 1 (exclusive)</source>
        <translation>{what} 必须介于 0 和 1 之间（不含端点）</translation>
    </message>
    <message>
        <source>enter where to write the model</source>
        <translation>请输入模型的写入位置</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; must end in .onnx</source>
        <translation>&apos;{name}&apos; 必须以 .onnx 结尾</translation>
    </message>
    <message>
        <source>{out} is a folder</source>
        <translation>{out} 是一个文件夹</translation>
    </message>
    <message>
        <source>name a file such as model.onnx</source>
        <translation>请指定一个文件名，例如 model.onnx</translation>
    </message>
    <message>
        <source>the output would be written into the source model folder</source>
        <translation>输出将会写入源模型文件夹</translation>
    </message>
    <message>
        <source>choose another folder; the export writes tokenizer files too</source>
        <translation>请选择其他文件夹；导出还会写入分词器文件</translation>
    </message>
    <message>
        <source>absolute tolerance</source>
        <translation>绝对容差</translation>
    </message>
    <message>
        <source>relative tolerance</source>
        <translation>相对容差</translation>
    </message>
    <message>
        <source>{name} exists and is replaced only when the new export succeeds</source>
        <translation>{name} 已存在，仅在新的导出成功后才会被替换</translation>
    </message>
</context>
<context>
    <name>PackagingPage</name>
    <message>
        <source>Package for an edge board</source>
        <translation>为边缘开发板打包</translation>
    </message>
    <message>
        <source>Signed bundle (Ed25519 over SHA-256 digests), checked against the board&apos;s accelerator, verified, then pushed to an agent that verifies again before it activates.</source>
        <translation>签名部署包（对 SHA-256 摘要做 Ed25519 签名），先按开发板的加速器检查并验证，再推送给代理，代理在激活前会再次验证。</translation>
    </message>
    <message>
        <source>Build</source>
        <translation>构建</translation>
    </message>
    <message>
        <source>.onnx file, export folder or `studio compile` folder</source>
        <translation>.onnx 文件、导出文件夹或 `studio compile` 输出文件夹</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Board</source>
        <translation>开发板</translation>
    </message>
    <message>
        <source>New key</source>
        <translation>新建密钥</translation>
    </message>
    <message>
        <source>create an Ed25519 key pair, encrypted with the passphrase below</source>
        <translation>创建 Ed25519 密钥对，用下面的口令加密</translation>
    </message>
    <message>
        <source>Public key…</source>
        <translation>公钥…</translation>
    </message>
    <message>
        <source>the key agents must trust: copy it or save it as NAME.pub</source>
        <translation>代理必须信任的密钥：复制它或另存为 NAME.pub</translation>
    </message>
    <message>
        <source>Signing key</source>
        <translation>签名密钥</translation>
    </message>
    <message>
        <source>name for a new key</source>
        <translation>新密钥的名称</translation>
    </message>
    <message>
        <source>key passphrase (never stored)</source>
        <translation>密钥口令（不会保存）</translation>
    </message>
    <message>
        <source>Passphrase</source>
        <translation>口令</translation>
    </message>
    <message>
        <source>default: model file stem</source>
        <translation>默认：模型文件名（不含扩展名）</translation>
    </message>
    <message>
        <source>default: timestamp</source>
        <translation>默认：时间戳</translation>
    </message>
    <message>
        <source>Version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>default: WORKSPACE/bundles/NAME-VERSION.tar</source>
        <translation>默认：WORKSPACE/bundles/NAME-VERSION.tar</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Package even if the board check fails</source>
        <translation>即使开发板检查失败也打包</translation>
    </message>
    <message>
        <source>Package even if the model fails the board&apos;s target or CPU architecture; the override is recorded in the signed manifest</source>
        <translation>即使模型不满足开发板的目标平台或 CPU 架构也打包；此次强制操作会记录在签名清单中</translation>
    </message>
    <message>
        <source>Build &amp;&amp; verify</source>
        <translation>构建并验证</translation>
    </message>
    <message>
        <source>   Deploy to</source>
        <translation>   部署到</translation>
    </message>
    <message>
        <source>Deploy</source>
        <translation>部署</translation>
    </message>
    <message>
        <source>Deploy existing…</source>
        <translation>部署已有部署包…</translation>
    </message>
    <message>
        <source>pick a bundle (.tar) built before: verified, then deployable</source>
        <translation>选择之前构建的部署包（.tar）：验证后即可部署</translation>
    </message>
    <message>
        <source>Choose an export, a board and a key, then build.</source>
        <translation>选择导出结果、开发板和密钥，然后构建。</translation>
    </message>
    <message>
        <source>No bundle yet</source>
        <translation>尚无部署包</translation>
    </message>
    <message>
        <source>choose a board…</source>
        <translation>选择开发板…</translation>
    </message>
    <message>
        <source>No board of the workspace&apos;s target {target}: choose the board the bundle is for.</source>
        <translation>工作区的目标 {target} 没有对应的开发板：请选择该包要部署到的开发板。</translation>
    </message>
    <message>
        <source>{cpu_arch}, {accelerator} → inspector target {target}; {runtime} with {join}; power: {get}</source>
        <translation>{cpu_arch}，{accelerator} → 检查器目标平台 {target}；{runtime}，支持 {join}；功耗：{get}</translation>
    </message>
    <message>
        <source>A `studio compile` folder as the export shows its runtime, parity and CPU check here.</source>
        <translation>若选择 `studio compile` 的输出文件夹作为导出结果，这里会显示它的运行时、一致性和 CPU 检查。</translation>
    </message>
    <message>
        <source>Export folder</source>
        <translation>导出文件夹</translation>
    </message>
    <message>
        <source>Bundle</source>
        <translation>部署包</translation>
    </message>
    <message>
        <source>Bundles (*.tar)</source>
        <translation>部署包 (*.tar)</translation>
    </message>
    <message>
        <source>name the new key</source>
        <translation>为新密钥命名</translation>
    </message>
    <message>
        <source>e.g. release-2026</source>
        <translation>例如 release-2026</translation>
    </message>
    <message>
        <source>created signing key {name}</source>
        <translation>已创建签名密钥 {name}</translation>
    </message>
    <message>
        <source>choose an export (an .onnx file or an export folder)</source>
        <translation>选择导出结果（.onnx 文件或导出文件夹）</translation>
    </message>
    <message>
        <source>no signing key: create one (name + passphrase, then New key)</source>
        <translation>没有签名密钥：请创建一个（填写名称和口令，然后点击“新建密钥”）</translation>
    </message>
    <message>
        <source>or `studio keys generate NAME` in a terminal</source>
        <translation>或在终端中运行 `studio keys generate NAME`</translation>
    </message>
    <message>
        <source>choose the board the bundle is for</source>
        <translation>请选择该包要部署到的开发板</translation>
    </message>
    <message>
        <source>no board&apos;s accelerator is the current target; pick one in Board</source>
        <translation>没有开发板的加速器是当前目标；请在“开发板”中选择一个</translation>
    </message>
    <message>
        <source>verifying the bundle offline</source>
        <translation>正在离线验证部署包</translation>
    </message>
    <message>
        <source>Building {name} {version} for {board}…</source>
        <translation>正在为 {board} 构建 {name} {version}…</translation>
    </message>
    <message>
        <source>Package {name} {version} for {board}</source>
        <translation>为 {board} 打包 {name} {version}</translation>
    </message>
    <message>
        <source>the bundle was not recorded for {model}: {error}</source>
        <translation>部署包未记录到 {model}：{error}</translation>
    </message>
    <message>
        <source>✔ {name} {version} for {board}: signed and verified</source>
        <translation>✔ {name} {version}（{board}）：已签名并验证</translation>
    </message>
    <message>
        <source>Bundle ready: choose an agent and deploy.</source>
        <translation>部署包已就绪：选择代理并部署。</translation>
    </message>
    <message>
        <source>Verify {name}</source>
        <translation>验证 {name}</translation>
    </message>
    <message>
        <source>✔ {name} {version} for {board}: verified</source>
        <translation>✔ {name} {version}（{board}）：已验证</translation>
    </message>
    <message>
        <source>Packaging failed: see the message above.</source>
        <translation>打包失败：请查看上方的消息。</translation>
    </message>
    <message>
        <source>✘ Packaging failed</source>
        <translation>✘ 打包失败</translation>
    </message>
    <message>
        <source>Deploy {name} to {name2}</source>
        <translation>将 {name} 部署到 {name2}</translation>
    </message>
    <message>
        <source>deploy failed: {message}</source>
        <translation>部署失败：{message}</translation>
    </message>
</context>
<context>
    <name>PageNavigation</name>
    <message>
        <source>the {page_id} page is not available in this installation</source>
        <translation>当前安装中没有 {page_id} 页面</translation>
    </message>
    <message>
        <source>cannot open page &apos;{page_id}&apos; (not installed); payload: {payload}</source>
        <translation>无法打开页面“{page_id}”（未安装）；数据：{payload}</translation>
    </message>
    <message>
        <source>{page} could not open {payload}: {error}</source>
        <translation>{page} 无法打开 {payload}：{error}</translation>
    </message>
    <message>
        <source>{page} could not show the problem: {error}</source>
        <translation>{page} 无法显示该问题：{error}</translation>
    </message>
    <message>
        <source>cancelling {title} job…</source>
        <translation>正在取消 {title} 任务…</translation>
    </message>
</context>
<context>
    <name>Pages</name>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Inspect</source>
        <translation>检查</translation>
    </message>
    <message>
        <source>Diff</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>Compile</source>
        <translation>编译</translation>
    </message>
    <message>
        <source>Triton</source>
        <translation>Triton</translation>
    </message>
    <message>
        <source>Package</source>
        <translation>打包</translation>
    </message>
    <message>
        <source>Devices</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Fleet</source>
        <translation>设备群</translation>
    </message>
    <message>
        <source>Dashboards</source>
        <translation>仪表板</translation>
    </message>
</context>
<context>
    <name>PathEdit</name>
    <message>
        <source>Browse...</source>
        <translation>浏览...</translation>
    </message>
    <message>
        <source>Choose a file</source>
        <translation>选择文件</translation>
    </message>
</context>
<context>
    <name>PlotGrid</name>
    <message>
        <source>Click the plots (or hold Ctrl) to zoom with the wheel; the wheel scrolls the page otherwise. Drag to pan; Follow returns to the live view.</source>
        <extracomment>curve points per horizontal pixel of the plot (min/max pairs): 1.0 is one pair per two columns, which draws like 2.0 at a little over half the stroking cost</extracomment>
        <translation>点击图表（或按住 Ctrl）后可用滚轮缩放，否则滚轮滚动页面。拖动可平移；“跟随”返回实时视图。</translation>
    </message>
    <message>
        <source>{key} budget</source>
        <translation>{key} 预算</translation>
    </message>
    <message>
        <source>Click the plots (or hold Ctrl) to zoom with the wheel; Follow returns to the live view.</source>
        <translation>点击图表（或按住 Ctrl）后可用滚轮缩放；“跟随”返回实时视图。</translation>
    </message>
</context>
<context>
    <name>Plots</name>
    <message>
        <source>Latency</source>
        <translation>延迟</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>吞吐量</translation>
    </message>
    <message>
        <source>Output tokens</source>
        <translation>输出 token</translation>
    </message>
    <message>
        <source>Memory / VRAM</source>
        <translation>内存 / 显存</translation>
    </message>
    <message>
        <source>Power</source>
        <translation>功耗</translation>
    </message>
    <message>
        <source>Agent pipeline stages</source>
        <translation>代理流水线各阶段</translation>
    </message>
    <message>
        <source>Generation: time to first token, inter-token latency</source>
        <translation>生成：首 token 时间、token 间延迟</translation>
    </message>
    <message>
        <source>SLA compliance</source>
        <translation>SLA 达标率</translation>
    </message>
    <message>
        <source>client</source>
        <translation>客户端</translation>
    </message>
    <message>
        <source>server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>host memory</source>
        <translation>主机内存</translation>
    </message>
    <message>
        <source>board</source>
        <translation>开发板</translation>
    </message>
    <message>
        <source>compliance</source>
        <translation>达标率</translation>
    </message>
    <message>
        <source>output tok/s</source>
        <translation>输出 tok/s</translation>
    </message>
    <message>
        <source>inter-token p95</source>
        <translation>token 间隔 p95</translation>
    </message>
    <message>
        <source>not available</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>no data yet</source>
        <translation>暂无数据</translation>
    </message>
</context>
<context>
    <name>PluginsDialog</name>
    <message>
        <source>ok</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>loaded</source>
        <translation>已加载</translation>
    </message>
    <message>
        <source>available</source>
        <translation>可用</translation>
    </message>
    <message>
        <source>declared</source>
        <translation>已声明</translation>
    </message>
    <message>
        <source>unavailable</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>plugin: {name}</source>
        <translation>插件：{name}</translation>
    </message>
    <message>
        <source>distribution: {name} {version}</source>
        <translation>发行包：{name} {version}</translation>
    </message>
    <message>
        <source>entry point: {entry}</source>
        <translation>入口点：{entry}</translation>
    </message>
    <message>
        <source>contribution: {kind} &apos;{name}&apos;</source>
        <translation>贡献：{kind}“{name}”</translation>
    </message>
    <message>
        <source>module: {module}</source>
        <translation>模块：{module}</translation>
    </message>
    <message>
        <source>help: {text}</source>
        <translation>帮助：{text}</translation>
    </message>
    <message>
        <source>description: {text}</source>
        <translation>说明：{text}</translation>
    </message>
    <message>
        <source>state: {state}</source>
        <translation>状态：{state}</translation>
    </message>
    <message>
        <source>Plugins</source>
        <translation>插件</translation>
    </message>
    <message>
        <source>Plugins registered through the &lt;code&gt;studio.plugins&lt;/code&gt; entry-point group and what each contributes. A contribution is imported only when first used (&lt;i&gt;Check all&lt;/i&gt; imports them now); one that fails is listed with its error and the rest of the studio works.</source>
        <translation>通过 &lt;code&gt;studio.plugins&lt;/code&gt; 入口点组注册的插件及其各自提供的功能。每项功能只在首次使用时导入（&lt;i&gt;全部检查&lt;/i&gt;会立即导入）；失败的功能会连同错误一起列出，Studio 的其余部分照常工作。</translation>
    </message>
    <message>
        <source>No plugins are registered in this environment.</source>
        <translation>当前环境中没有注册任何插件。</translation>
    </message>
    <message>
        <source>Check all</source>
        <translation>全部检查</translation>
    </message>
    <message>
        <source>Import every plugin contribution now and show what fails</source>
        <translation>立即导入所有插件功能并显示失败项</translation>
    </message>
    <message>
        <source> (built-in)</source>
        <translation>（内置）</translation>
    </message>
</context>
<context>
    <name>Previews</name>
    <message>
        <source>the image could not be read for drawing: {error}</source>
        <translation>无法读取图像用于绘制：{error}</translation>
    </message>
    <message>
        <source>what the model got (resized, normalised with the processor&apos;s mean / std)</source>
        <translation>模型收到的输入（已缩放，并按处理器的均值 / 标准差归一化）</translation>
    </message>
    <message>
        <source>what the model got (resized)</source>
        <translation>模型收到的输入（已缩放）</translation>
    </message>
    <message>
        <source>the waveform the model got</source>
        <translation>模型收到的波形</translation>
    </message>
    <message>
        <source>softmax over {output} (image 1 against {n} labels)</source>
        <translation>对 {output} 做 softmax（图像 1 对 {n} 个标签）</translation>
    </message>
    <message>
        <source>{output} has {scores} scores for {labels} labels: not drawn</source>
        <translation>{output} 有 {scores} 个分数，对应 {labels} 个标签：不绘制</translation>
    </message>
    <message>
        <source>the model takes the image file itself: choose the processor file to see what the server makes of it</source>
        <translation>模型直接接收图像文件：选择处理器文件即可查看服务器如何处理它</translation>
    </message>
    <message>
        <source>the server cuts the image into patches (Qwen2-VL): no picture of them is drawn</source>
        <translation>服务器将图像切成图块（Qwen2-VL）：不绘制图块</translation>
    </message>
    <message>
        <source>the server-side view could not be made: {error}</source>
        <translation>无法生成服务器端视图：{error}</translation>
    </message>
    <message>
        <source>what the server&apos;s preprocessor makes of it ({file})</source>
        <translation>服务器预处理器的处理结果（{file}）</translation>
    </message>
    <message>
        <source>the audio could not be drawn: {error}</source>
        <translation>无法绘制音频：{error}</translation>
    </message>
    <message>
        <source>{seconds} s at {rate} Hz</source>
        <translation>{seconds} 秒，{rate} Hz</translation>
    </message>
    <message>
        <source>log-mel {size} (the part with audio drawn): the model&apos;s input_features, as the agent computes them</source>
        <translation>log-mel {size}（绘制有音频的部分）：模型的 input_features，与代理的计算方式相同</translation>
    </message>
    <message>
        <source>no log-mel: the processor describes no log-mel front end (the model takes the waveform)</source>
        <translation>无 log-mel：处理器未描述 log-mel 前端（模型直接接收波形）</translation>
    </message>
</context>
<context>
    <name>ProfileFlow</name>
    <message>
        <source>profiling…</source>
        <translation>正在性能分析…</translation>
    </message>
    <message>
        <source>profile {name}</source>
        <translation>性能分析 {name}</translation>
    </message>
    <message>
        <source>profile of {name} saved to {path}</source>
        <translation>{name} 的性能分析已保存到 {path}</translation>
    </message>
    <message>
        <source>could not save the profile of {name}: {error}</source>
        <translation>无法保存 {name} 的性能分析：{error}</translation>
    </message>
    <message>
        <source>profiled: {fmt_ms} ms per run</source>
        <translation>性能分析完成：每次运行 {fmt_ms} ms</translation>
    </message>
    <message>
        <source>not saved (no workspace open)</source>
        <translation>未保存（未打开工作区）</translation>
    </message>
    <message>
        <source>loaded the saved profile of {name} from {path}</source>
        <translation>已从 {path} 加载 {name} 保存的性能分析</translation>
    </message>
    <message>
        <source>profile {name} with the inputs of the original&apos;s profile ({original}, {runs} runs) and show the deltas</source>
        <translation>用原始模型性能分析的输入（{original}，{runs} 次运行）对 {name} 做性能分析并显示差异</translation>
    </message>
</context>
<context>
    <name>ProfileFormat</name>
    <message>
        <source>measured</source>
        <translation>已测量</translation>
    </message>
    <message>
        <source>fused</source>
        <translation>已融合</translation>
    </message>
    <message>
        <source>folded</source>
        <translation>已折叠</translation>
    </message>
    <message>
        <source>removed</source>
        <translation>已移除</translation>
    </message>
    <message>
        <source>not run</source>
        <translation>未运行</translation>
    </message>
    <message>
        <source>fused into {node}</source>
        <translation>融合进 {node}</translation>
    </message>
    <message>
        <source> (as {op})</source>
        <translation>（作为 {op}）</translation>
    </message>
    <message>
        <source>{chip} mean · {p95} ms p95 · {share} of node time · {calls} kernel call(s) per run</source>
        <translation>{chip} 均值 · p95 {p95} ms · 占节点耗时 {share} · 每次运行 {calls} 次内核调用</translation>
    </message>
    <message>
        <source>module {name}</source>
        <translation>模块 {name}</translation>
    </message>
    <message>
        <source>Profiled time ({runs} runs):</source>
        <translation>性能分析耗时（{runs} 次运行）：</translation>
    </message>
    <message>
        <source> gone</source>
        <translation> 已消失</translation>
    </message>
    <message>
        <source> new</source>
        <translation> 新增</translation>
    </message>
    <message>
        <source>Run time {before} → {after} ms ({delta} ms{ratio})</source>
        <translation>运行耗时 {before} → {after} ms（{delta} ms{ratio}）</translation>
    </message>
    <message>
        <source>Node time {before} → {after} ms · {gone} node(s) gone, {new} new</source>
        <translation>节点耗时 {before} → {after} ms · 消失 {gone} 个节点，新增 {new} 个</translation>
    </message>
    <message>
        <source>By scope</source>
        <translation>按作用域</translation>
    </message>
    <message>
        <source>scope</source>
        <translation>作用域</translation>
    </message>
    <message>
        <source>By node</source>
        <translation>按节点</translation>
    </message>
    <message>
        <source>node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>before ms</source>
        <translation>修改前 ms</translation>
    </message>
    <message>
        <source>after ms</source>
        <translation>修改后 ms</translation>
    </message>
    <message>
        <source>… {n} more</source>
        <translation>… 另有 {n} 项</translation>
    </message>
</context>
<context>
    <name>ProfilePanel</name>
    <message>
        <source>Top 10</source>
        <translation>前 10</translation>
    </message>
    <message>
        <source>Top 25</source>
        <translation>前 25</translation>
    </message>
    <message>
        <source>Top 100</source>
        <translation>前 100</translation>
    </message>
    <message>
        <source>All nodes</source>
        <translation>全部节点</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>性能分析</translation>
    </message>
    <message>
        <source>run ONNX Runtime&apos;s profiler on this model (per-node mean / p95 / share)</source>
        <translation>对该模型运行 ONNX Runtime 性能分析器（每节点均值 / p95 / 占比）</translation>
    </message>
    <message>
        <source>Compare with original</source>
        <translation>与原始模型对比</translation>
    </message>
    <message>
        <source>profile this fixed model with the original&apos;s inputs and show the deltas</source>
        <translation>用原始模型的输入分析该修复后模型的性能，并显示差异</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <source>No profile yet. &lt;b&gt;Profile&lt;/b&gt; runs the model with ONNX Runtime&apos;s profiler and colours the graph by time.</source>
        <translation>尚无性能分析结果。&lt;b&gt;性能分析&lt;/b&gt;会用 ONNX Runtime 性能分析器运行模型，并按耗时为计算图着色。</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Modules</source>
        <translation>模块</translation>
    </message>
    <message>
        <source>After a fix, “Compare with original” profiles the fixed model and shows what got faster or slower here.</source>
        <translation>修复之后，“与原始模型对比”会分析修复后模型的性能，并在此显示哪些变快或变慢。</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>{ms} per run</source>
        <translation>每次运行 {ms}</translation>
    </message>
    <message>
        <source>(p95 {p95} ms) · node time {node} ms</source>
        <translation>（p95 {p95} ms）· 节点耗时 {node} ms</translation>
    </message>
    <message>
        <source>{runs} runs after {warmup} warm-up</source>
        <translation>预热 {warmup} 次后运行 {runs} 次</translation>
    </message>
    <message>
        <source>{n} nodes: {statuses}</source>
        <translation>{n} 个节点：{statuses}</translation>
    </message>
    <message>
        <source>custom ops: {ops}</source>
        <translation>自定义算子：{ops}</translation>
    </message>
    <message>
        <source>taken {when}</source>
        <translation>采集于 {when}</translation>
    </message>
    <message>
        <source> · saved to {name}</source>
        <translation> · 已保存到 {name}</translation>
    </message>
    <message>
        <source>the model changed after this profile: run Profile again</source>
        <translation>此次性能分析后模型已变化：请重新运行“性能分析”</translation>
    </message>
    <message>
        <source>the exporter&apos;s node names</source>
        <translation>导出器的节点名称</translation>
    </message>
    <message>
        <source>the exporter&apos;s scope metadata</source>
        <translation>导出器的作用域元数据</translation>
    </message>
    <message>
        <source>PyTorch times from the HF model on the same inputs</source>
        <translation>PyTorch 耗时来自 HF 模型在相同输入上的运行</translation>
    </message>
    <message>
        <source>no PyTorch times (not an HF export folder)</source>
        <translation>无 PyTorch 耗时（不是 HF 导出文件夹）</translation>
    </message>
    <message>
        <source>Modules from {get}; {torch}. ONNX ms sums the module&apos;s nodes (inclusive). Click a module to ring its nodes.</source>
        <translation>模块来自 {get}；{torch}。ONNX ms 为该模块所有节点之和（含子模块）。点击模块可圈出其节点。</translation>
    </message>
    <message>
        <source>Nodes ({shown} of {total})</source>
        <translation>节点（{shown} / {total}）</translation>
    </message>
    <message>
        <source>Nodes ({n})</source>
        <translation>节点（{n}）</translation>
    </message>
    <message>
        <source>ORT reported no kernel times</source>
        <translation>ORT 没有报告内核耗时</translation>
    </message>
    <message>
        <source>Modules ({n})</source>
        <translation>模块（{n}）</translation>
    </message>
    <message>
        <source>{n} ONNX nodes, {share} of node time</source>
        <translation>{n} 个 ONNX 节点，占节点耗时 {share}</translation>
    </message>
</context>
<context>
    <name>ProfileShapesDialog</name>
    <message>
        <source>Profile with ONNX Runtime</source>
        <translation>用 ONNX Runtime 进行性能分析</translation>
    </message>
    <message>
        <source>Some input dims are dynamic: choose the sizes to profile at. Per-node times are the mean and p95 over the measured runs, after warm-up runs.</source>
        <translation>部分输入维度是动态的：请选择性能分析所用的尺寸。每节点耗时为预热之后各次测量运行的均值和 p95。</translation>
    </message>
    <message>
        <source>measured runs</source>
        <translation>测量运行次数</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>性能分析</translation>
    </message>
</context>
<context>
    <name>PublicKeyDialog</name>
    <message>
        <source>Public key: {name}</source>
        <translation>公钥：{name}</translation>
    </message>
    <message>
        <source>Agents verify bundles against this key. Put it in the board&apos;s trust store:
install-agent.sh --trust FILE, or /etc/studio-agent/trusted/NAME.pub,
or push it to an agent started with --allow-trust-push.</source>
        <translation>代理用该密钥验证部署包。请将其放入开发板的信任库：
install-agent.sh --trust FILE，或 /etc/studio-agent/trusted/NAME.pub，
或推送给以 --allow-trust-push 启动的代理。</translation>
    </message>
    <message>
        <source>Push to agent</source>
        <translation>推送到代理</translation>
    </message>
    <message>
        <source>add this key to the agent&apos;s trust store over its management API (same as `studio agent trust --key NAME`)</source>
        <translation>通过管理 API 将该密钥加入代理的信任库（等同于 `studio agent trust --key NAME`）</translation>
    </message>
    <message>
        <source>no agent with a token file (add one under Agents)</source>
        <translation>没有带令牌文件的代理（请在“代理”下添加）</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <source>pushing to {url}…</source>
        <translation>正在推送到 {url}…</translation>
    </message>
    <message>
        <source>Push key {key} to {agent}</source>
        <translation>将密钥 {key} 推送到 {agent}</translation>
    </message>
    <message>
        <source>{agent} now trusts key {key}</source>
        <translation>{agent} 现已信任密钥 {key}</translation>
    </message>
    <message>
        <source>the agent</source>
        <translation>该代理</translation>
    </message>
    <message>
        <source> (it already did)</source>
        <translation>（此前已信任）</translation>
    </message>
    <message>
        <source>copied to the clipboard</source>
        <translation>已复制到剪贴板</translation>
    </message>
    <message>
        <source>could not write {path}: {error}</source>
        <translation>无法写入 {path}：{error}</translation>
    </message>
    <message>
        <source>saved to {path}</source>
        <translation>已保存到 {path}</translation>
    </message>
    <message>
        <source>Save public key</source>
        <translation>保存公钥</translation>
    </message>
    <message>
        <source>Public keys (*.pub)</source>
        <translation>公钥 (*.pub)</translation>
    </message>
</context>
<context>
    <name>RepoForm</name>
    <message>
        <source>Serve on Triton</source>
        <translation>在 Triton 上部署</translation>
    </message>
    <message>
        <source>Model repository from the model&apos;s real inputs and outputs, checked before any server sees it, then served by the local CPU tritonserver. Same as `studio triton build-repo`, `check` and `serve-local`.</source>
        <translation>根据模型真实的输入输出生成模型仓库，在交给任何服务器之前先行检查，然后由本地 CPU tritonserver 提供服务。等同于 `studio triton build-repo`、`check` 和 `serve-local`。</translation>
    </message>
    <message>
        <source>Build</source>
        <translation>构建</translation>
    </message>
    <message>
        <source>write (a new version of) the model into the repository, then check it</source>
        <translation>将模型（的新版本）写入仓库，然后检查</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <source>check every config in the repository against its ONNX model</source>
        <translation>对照 ONNX 模型检查仓库中的每个配置</translation>
    </message>
    <message>
        <source>Choose a model, then Build.</source>
        <translation>选择模型，然后点击“构建”。</translation>
    </message>
    <message>
        <source>Model and repository</source>
        <translation>模型和仓库</translation>
    </message>
    <message>
        <source>.onnx file or export folder (split exports too)</source>
        <translation>.onnx 文件或导出文件夹（也支持拆分导出）</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>File…</source>
        <translation>文件…</translation>
    </message>
    <message>
        <source>choose an .onnx file</source>
        <translation>选择一个 .onnx 文件</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>choose an export folder (model.onnx, or modality parts for a split export)</source>
        <translation>选择导出文件夹（model.onnx，或拆分导出的各模态子图）</translation>
    </message>
    <message>
        <source>Repository</source>
        <translation>仓库</translation>
    </message>
    <message>
        <source>model name in the repository</source>
        <translation>仓库中的模型名称</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>onnxruntime_onnx (production Triton)</source>
        <translation>onnxruntime_onnx（生产环境 Triton）</translation>
    </message>
    <message>
        <source>Python backend + ONNX Runtime</source>
        <translation>Python 后端 + ONNX Runtime</translation>
    </message>
    <message>
        <source>platform: &quot;onnxruntime_onnx&quot;: Triton&apos;s ONNX Runtime backend. The local CPU server serves it through a generated Python-backend copy.</source>
        <translation>platform: &quot;onnxruntime_onnx&quot;：Triton 的 ONNX Runtime 后端。本地 CPU 服务器通过生成的 Python 后端副本提供服务。</translation>
    </message>
    <message>
        <source>backend: &quot;python&quot; running the same ONNX with onnxruntime (for servers without the ONNX Runtime backend)</source>
        <translation>backend: &quot;python&quot;，用 onnxruntime 运行同一个 ONNX（适用于没有 ONNX Runtime 后端的服务器）</translation>
    </message>
    <message>
        <source>Flavour</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>next</source>
        <translation>下一个</translation>
    </message>
    <message>
        <source>version folder to write; &apos;next&apos; is one past the highest (older are kept)</source>
        <translation>要写入的版本文件夹；&apos;next&apos; 为当前最高版本加一（保留旧版本）</translation>
    </message>
    <message>
        <source>version_policy: latest:N, all or specific:1,2</source>
        <translation>version_policy：latest:N、all 或 specific:1,2</translation>
    </message>
    <message>
        <source>Policy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>Version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Batching and instances</source>
        <translation>批处理与实例</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>auto: 8 when every tensor has a dynamic first dim, else 0 (no batching)</source>
        <translation>auto：所有张量的第一维都是动态时为 8，否则为 0（不批处理）</translation>
    </message>
    <message>
        <source>Max batch size</source>
        <translation>最大批大小</translation>
    </message>
    <message>
        <source>Dynamic batching</source>
        <translation>动态批处理</translation>
    </message>
    <message>
        <source>preferred sizes, e.g. 4, 8</source>
        <translation>首选批大小，例如 4, 8</translation>
    </message>
    <message>
        <source>delay</source>
        <translation>延迟</translation>
    </message>
    <message>
        <source>instance_group kind: {kind}</source>
        <translation>instance_group 类型：{kind}</translation>
    </message>
    <message>
        <source>GPU ids: 0,1</source>
        <translation>GPU 编号：0,1</translation>
    </message>
    <message>
        <source>Instances</source>
        <translation>实例</translation>
    </message>
    <message>
        <source>Warm-up request (batch 1) at load</source>
        <translation>加载时发送预热请求（批大小 1）</translation>
    </message>
    <message>
        <source>Preprocessing</source>
        <translation>预处理</translation>
    </message>
    <message>
        <source>tokenizer.json or its folder (optional)</source>
        <translation>tokenizer.json 或其所在文件夹（可选）</translation>
    </message>
    <message>
        <source>adds NAME_tokenizer (text -&gt; token ids) and the NAME_pipeline ensemble</source>
        <translation>添加 NAME_tokenizer（文本 -&gt; token id）和 NAME_pipeline 集成模型</translation>
    </message>
    <message>
        <source>Tokenizer</source>
        <translation>分词器</translation>
    </message>
    <message>
        <source>{p} does not exist</source>
        <translation>{p} 不存在</translation>
    </message>
    <message>
        <source>split export ({modalities}): builds {parts} and the BLS router {name}, which runs only the parts a request carries</source>
        <translation>拆分导出（{modalities}）：构建 {parts} 以及 BLS 路由 {name}，它只运行请求中携带的部分</translation>
    </message>
    <message>
        <source>; tokenizer.json found: adds a text pipeline</source>
        <translation>；找到 tokenizer.json：添加文本流水线</translation>
    </message>
    <message>
        <source>export folder with {n} .onnx file(s)</source>
        <translation>导出文件夹，含 {n} 个 .onnx 文件</translation>
    </message>
    <message>
        <source>; tokenizer.json found: adds NAME_tokenizer + NAME_pipeline</source>
        <translation>；找到 tokenizer.json：添加 NAME_tokenizer + NAME_pipeline</translation>
    </message>
    <message>
        <source>{name}: one model</source>
        <translation>{name}：单个模型</translation>
    </message>
    <message>
        <source>{name} has version(s) {join} in the repository; &apos;next&apos; writes {value}, older versions are kept</source>
        <translation>{name} 在仓库中已有版本 {join}；&apos;next&apos; 将写入 {value}，保留旧版本</translation>
    </message>
    <message>
        <source>{name} is not in the repository yet: Build writes version 1</source>
        <translation>{name} 尚不在仓库中：“构建”将写入版本 1</translation>
    </message>
    <message>
        <source>ONNX model</source>
        <translation>ONNX 模型</translation>
    </message>
    <message>
        <source>ONNX models (*.onnx)</source>
        <translation>ONNX 模型 (*.onnx)</translation>
    </message>
    <message>
        <source>Export folder (model.onnx or modality parts)</source>
        <translation>导出文件夹（model.onnx 或各模态子图）</translation>
    </message>
    <message>
        <source>Model repository folder</source>
        <translation>模型仓库文件夹</translation>
    </message>
    <message>
        <source>Tokenizer (tokenizer.json *.json)</source>
        <translation>分词器 (tokenizer.json *.json)</translation>
    </message>
    <message>
        <source>choose a model: an .onnx file or an export folder</source>
        <translation>选择模型：.onnx 文件或导出文件夹</translation>
    </message>
    <message>
        <source>choose a repository folder</source>
        <translation>选择仓库文件夹</translation>
    </message>
    <message>
        <source>it is created if missing</source>
        <translation>不存在时会自动创建</translation>
    </message>
    <message>
        <source>preferred batch sizes &apos;{text}&apos; are not whole numbers</source>
        <translation>首选批大小 &apos;{text}&apos; 不是整数</translation>
    </message>
    <message>
        <source>GPU ids &apos;{text}&apos; are not whole numbers</source>
        <translation>GPU 编号 &apos;{text}&apos; 不是整数</translation>
    </message>
</context>
<context>
    <name>RepoTree</name>
    <message>
        <source>No repository yet: Build writes one.</source>
        <translation>尚无仓库：“构建”会生成一个。</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>the generated config.pbtxt appears here after Build</source>
        <translation>构建后生成的 config.pbtxt 会显示在这里</translation>
    </message>
    <message>
        <source>Repository {name}/  ·  {count} files and folders</source>
        <translation>仓库 {name}/  ·  {count} 个文件和文件夹</translation>
    </message>
    <message>
        <source>{path} does not exist</source>
        <translation>{path} 不存在</translation>
    </message>
    <message>
        <source>ONNX model, {size} (inspect it on the Inspect page)</source>
        <translation>ONNX 模型，{size}（可在“检查”页面检查）</translation>
    </message>
    <message>
        <source>{size} binary file</source>
        <translation>{size} 二进制文件</translation>
    </message>
</context>
<context>
    <name>ReportDialog</name>
    <message>
        <source>Report - {name}</source>
        <translation>报告 - {name}</translation>
    </message>
    <message>
        <source>cannot read {path}: {error}</source>
        <translation>无法读取 {path}：{error}</translation>
    </message>
    <message>
        <source>Open with system viewer</source>
        <translation>用系统查看器打开</translation>
    </message>
</context>
<context>
    <name>ResultStep</name>
    <message>
        <source>Open report</source>
        <translation>打开报告</translation>
    </message>
    <message>
        <source>Open in inspector</source>
        <translation>在检查器中打开</translation>
    </message>
    <message>
        <source>Show output folder</source>
        <translation>显示输出文件夹</translation>
    </message>
    <message>
        <source>Serve on Triton</source>
        <translation>在 Triton 上部署</translation>
    </message>
    <message>
        <source>build a Triton model repository from this export and serve it locally</source>
        <translation>用该导出结果构建 Triton 模型仓库并在本地提供服务</translation>
    </message>
    <message>
        <source>Package for a board</source>
        <translation>为开发板打包</translation>
    </message>
    <message>
        <source>sign this export as an edge bundle for a board and deploy it to an agent</source>
        <translation>将该导出结果签名为开发板的边缘部署包，并部署到代理</translation>
    </message>
    <message>
        <source>Compile</source>
        <translation>编译</translation>
    </message>
    <message>
        <source>compile the model with TVM Relax for a board or this host</source>
        <translation>用 TVM Relax 为开发板或本机编译模型</translation>
    </message>
    <message>
        <source>What went wrong</source>
        <translation>出了什么问题</translation>
    </message>
    <message>
        <source>Stage</source>
        <translation>阶段</translation>
    </message>
    <message>
        <source>Error class</source>
        <translation>错误类别</translation>
    </message>
    <message>
        <source>ONNX node</source>
        <translation>ONNX 节点</translation>
    </message>
    <message>
        <source>Operator</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>PyTorch module</source>
        <translation>PyTorch 模块</translation>
    </message>
    <message>
        <source>Suggested fix</source>
        <translation>建议的修复方法</translation>
    </message>
    <message>
        <source>Graph around the failing node (highlighted):</source>
        <translation>出错节点周围的计算图（已高亮）：</translation>
    </message>
    <message>
        <source>Show raw log</source>
        <translation>显示原始日志</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Tokenizer</source>
        <translation>分词器</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Checks</source>
        <translation>检查</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Validation: ONNX Runtime against PyTorch</source>
        <translation>验证：ONNX Runtime 对比 PyTorch</translation>
    </message>
    <message>
        <source>Files written</source>
        <translation>已写入的文件</translation>
    </message>
    <message>
        <source>Export succeeded and validated</source>
        <translation>导出成功并已通过验证</translation>
    </message>
    <message>
        <source>KV cache ({dtype}): greedy generation token-exact with HF generate() on {ok} of {n} prompt(s): Try it below.</source>
        <translation>KV 缓存（{dtype}）：在 {n} 个提示词中的 {ok} 个上，贪心生成与 HF generate() 逐 token 完全一致：可在下方试用。</translation>
    </message>
    <message>
        <source>KV cache ({dtype}): greedy generation differs from HF generate() on {ok} of {n} prompt(s): Try it below.</source>
        <translation>KV 缓存（{dtype}）：贪心生成与 HF generate() 存在差异（{n} 个提示词中 {ok} 个一致）：可在下方试用。</translation>
    </message>
    <message>
        <source>{value} passed onnx.checker, shape inference and ONNX Runtime parity on {n} case(s) (worst max abs error {worst:.2e}).{said} It was added to the workspace.</source>
        <translation>{value} 通过了 onnx.checker、形状推断以及 {n} 个用例上的 ONNX Runtime 一致性检查（最大绝对误差的最差值 {worst:.2e}）。{said}已添加到工作区。</translation>
    </message>
    <message>
        <source>Export cancelled</source>
        <translation>导出已取消</translation>
    </message>
    <message>
        <source>Nothing was left at the output path.</source>
        <translation>输出路径上没有留下任何文件。</translation>
    </message>
    <message>
        <source>an unknown stage</source>
        <translation>未知阶段</translation>
    </message>
    <message>
        <source>Export failed at {stage}</source>
        <translation>导出在{stage}失败</translation>
    </message>
    <message>
        <source>Nothing was written at the output path. The diagnosis below says where it broke and what to change.</source>
        <translation>输出路径上没有写入任何内容。下面的诊断说明了出错位置以及需要修改的地方。</translation>
    </message>
    <message>
        <source>no fix is known for this failure; the raw log has the details</source>
        <translation>该故障暂无已知修复方法；详情见原始日志</translation>
    </message>
    <message>
        <source>job log</source>
        <translation>任务日志</translation>
    </message>
    <message>
        <source>(the exporter produced no log)</source>
        <translation>（导出器未产生日志）</translation>
    </message>
    <message>
        <source>{value}  ({value2})  from {model_dir}</source>
        <translation>{value}  （{value2}）  来自 {model_dir}</translation>
    </message>
    <message>
        <source>none found</source>
        <translation>未找到</translation>
    </message>
    <message>
        <source>(the model type expects {cls})</source>
        <translation>（该模型类型应使用 {cls}）</translation>
    </message>
    <message>
        <source>exporter {name}</source>
        <translation>导出器 {name}</translation>
    </message>
    <message>
        <source>dynamic {axes}</source>
        <translation>动态 {axes}</translation>
    </message>
    <message>
        <source>split into {n} part(s)</source>
        <translation>拆分为 {n} 个部分</translation>
    </message>
    <message>
        <source>checker: {checker} · shape inference: {shape_inference} · ORT load: {ort_load}</source>
        <translation>checker：{checker} · 形状推断：{shape_inference} · ORT 加载：{ort_load}</translation>
    </message>
    <message>
        <source>Each output must satisfy |onnx - torch| &lt;= atol + rtol·|torch| (atol {atol:g}, rtol {rtol:g}).</source>
        <translation>每个输出都必须满足 |onnx - torch| &lt;= atol + rtol·|torch|（atol {atol:g}，rtol {rtol:g}）。</translation>
    </message>
    <message>
        <source>Hide raw log</source>
        <translation>隐藏原始日志</translation>
    </message>
</context>
<context>
    <name>ResultView</name>
    <message>
        <source>Zero-shot: &lt;b&gt;{value}&lt;/b&gt; ({value2:.1f} %) — {scores_note}</source>
        <translation>零样本：&lt;b&gt;{value}&lt;/b&gt;（{value2:.1f} %）— {scores_note}</translation>
    </message>
</context>
<context>
    <name>RunStep</name>
    <message>
        <source>The export runs in the background: you can switch pages and come back. Cancel stops it at the next safe point and leaves nothing half-written at the output path.</source>
        <translation>导出在后台运行：你可以切换到其他页面再回来。“取消”会在下一个安全点停止，不会在输出路径留下写了一半的文件。</translation>
    </message>
    <message>
        <source>waiting to start…</source>
        <translation>等待启动…</translation>
    </message>
    <message>
        <source>Cancel export</source>
        <translation>取消导出</translation>
    </message>
    <message>
        <source>starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>cancelling at the next safe point…</source>
        <translation>将在下一个安全点取消…</translation>
    </message>
</context>
<context>
    <name>ServerPanel</name>
    <message>
        <source>add a server to watch it</source>
        <translation>添加服务器以监视它</translation>
    </message>
    <message>
        <source>select a model and press Show config</source>
        <translation>选择一个模型并点击“显示配置”</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Server metrics (Prometheus)</source>
        <translation>服务器指标（Prometheus）</translation>
    </message>
    <message>
        <source>Statistics and metrics</source>
        <translation>统计与指标</translation>
    </message>
    <message>
        <source>{name}: connecting...</source>
        <translation>{name}：正在连接...</translation>
    </message>
    <message>
        <source>✖ {name}: disconnected ({down_reason})</source>
        <translation>✖ {name}：已断开（{down_reason}）</translation>
    </message>
    <message>
        <source>{url}: {error}
retrying every {retry_s:.0f} s</source>
        <translation>{url}：{error}
每 {retry_s:.0f} s 重试一次</translation>
    </message>
    <message>
        <source>● {name}: live {value}, ready {value2}  -  {server} {version}</source>
        <translation>● {name}：存活 {value}，就绪 {value2}  -  {server} {version}</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>{n} extensions: {names}</source>
        <translation>{n} 个扩展：{names}</translation>
    </message>
    <message>
        <source>not loaded</source>
        <translation>未加载</translation>
    </message>
    <message>
        <source>metrics</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>not available</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>Model control</source>
        <translation>模型控制</translation>
    </message>
    <message>
        <source>explicit (load every model at start)</source>
        <translation>explicit（启动时加载所有模型）</translation>
    </message>
    <message>
        <source>poll (pick up new versions)</source>
        <translation>poll（自动发现新版本）</translation>
    </message>
    <message>
        <source>Serve locally</source>
        <translation>本地部署</translation>
    </message>
    <message>
        <source>start the bundled CPU tritonserver on free loopback ports</source>
        <translation>在空闲的回环端口上启动自带的 CPU tritonserver</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Open in Devices</source>
        <translation>在“设备”中打开</translation>
    </message>
    <message>
        <source>add this server to the workspace&apos;s devices and watch it there</source>
        <translation>将该服务器添加到工作区的设备中，并在那里监视它</translation>
    </message>
    <message>
        <source>Not running.</source>
        <translation>未运行。</translation>
    </message>
    <message>
        <source>Metrics</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>Server log</source>
        <translation>服务器日志</translation>
    </message>
    <message>
        <source>tritonserver&apos;s log appears here while it runs</source>
        <translation>tritonserver 运行时的日志会显示在这里</translation>
    </message>
</context>
<context>
    <name>Shortcuts</name>
    <message>
        <source>Ctrl+1 … Ctrl+9</source>
        <translation>Ctrl+1 … Ctrl+9</translation>
    </message>
    <message>
        <source>Go to the n-th page of the sidebar</source>
        <translation>转到侧边栏的第 n 个页面</translation>
    </message>
    <message>
        <source>Ctrl+O</source>
        <translation>Ctrl+O</translation>
    </message>
    <message>
        <source>Open a workspace</source>
        <translation>打开工作区</translation>
    </message>
    <message>
        <source>Ctrl+N</source>
        <translation>Ctrl+N</translation>
    </message>
    <message>
        <source>New workspace</source>
        <translation>新建工作区</translation>
    </message>
    <message>
        <source>Ctrl+F</source>
        <translation>Ctrl+F</translation>
    </message>
    <message>
        <source>Focus the global search (pages, models, targets)</source>
        <translation>聚焦全局搜索（页面、模型、目标平台）</translation>
    </message>
    <message>
        <source>Ctrl+Shift+L</source>
        <translation>Ctrl+Shift+L</translation>
    </message>
    <message>
        <source>Toggle light / dark theme</source>
        <translation>切换浅色 / 深色主题</translation>
    </message>
    <message>
        <source>Esc</source>
        <translation>Esc</translation>
    </message>
    <message>
        <source>Cancel the current page&apos;s running job</source>
        <translation>取消当前页面正在运行的任务</translation>
    </message>
    <message>
        <source>Show this list</source>
        <translation>显示此列表</translation>
    </message>
    <message>
        <source>Ctrl+Q</source>
        <translation>Ctrl+Q</translation>
    </message>
    <message>
        <source>Quit (running jobs are cancelled first)</source>
        <translation>退出（先取消正在运行的任务）</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
</context>
<context>
    <name>SideTabs</name>
    <message>
        <source>Select a node in the graph or a finding to see its details.</source>
        <translation>在计算图中选择节点或选择一条发现以查看详情。</translation>
    </message>
    <message>
        <source>Statistics appear after inspection.</source>
        <translation>检查后会显示统计信息。</translation>
    </message>
    <message>
        <source>Dynamic dims appear after inspection.</source>
        <translation>检查后会显示动态维度。</translation>
    </message>
    <message>
        <source>Run a fix to see what it changes.</source>
        <translation>运行一个修复以查看它改变了什么。</translation>
    </message>
    <message>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Statistics</source>
        <translation>统计</translation>
    </message>
    <message>
        <source>Dynamic</source>
        <translation>动态维度</translation>
    </message>
    <message>
        <source>Changes</source>
        <translation>变更</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>性能分析</translation>
    </message>
    <message>
        <source>Verify</source>
        <translation>验证</translation>
    </message>
</context>
<context>
    <name>SignatureStep</name>
    <message>
        <source>&apos;{part}&apos; is not axis:name (for example 0:batch)</source>
        <translation>“{part}”不是 轴:名称 的格式（例如 0:batch）</translation>
    </message>
    <message>
        <source>axis {axis} is given twice</source>
        <translation>轴 {axis} 重复给出</translation>
    </message>
    <message>
        <source>The model&apos;s inputs, inferred from its class and processor. Set each input&apos;s modality (used to split the graph per encoder), rename it, or change which axes stay dynamic.</source>
        <translation>模型的输入，根据其模型类和处理器推断。可设置每个输入的模态（用于按编码器拆分计算图）、重命名，或更改哪些轴保持动态。</translation>
    </message>
    <message>
        <source>Add input</source>
        <translation>添加输入</translation>
    </message>
    <message>
        <source>Remove selected</source>
        <translation>移除所选</translation>
    </message>
    <message>
        <source>Reset to inferred</source>
        <translation>重置为推断值</translation>
    </message>
    <message>
        <source>As a command-line flag:</source>
        <translation>对应的命令行参数：</translation>
    </message>
    <message>
        <source>(no inputs)</source>
        <translation>（无输入）</translation>
    </message>
    <message>
        <source>the signature is empty: tick at least one input</source>
        <translation>签名为空：请至少勾选一个输入</translation>
    </message>
    <message>
        <source>row {value}: the input name is empty</source>
        <translation>第 {value} 行：输入名称为空</translation>
    </message>
    <message>
        <source>row {value}: &apos;{name}&apos; is not a valid input name</source>
        <translation>第 {value} 行：&apos;{name}&apos; 不是有效的输入名称</translation>
    </message>
    <message>
        <source>use the forward() argument name, e.g. pixel_values</source>
        <translation>请使用 forward() 的参数名，例如 pixel_values</translation>
    </message>
    <message>
        <source>row {value}: input &apos;{name}&apos; appears twice</source>
        <translation>第 {value} 行：输入 &apos;{name}&apos; 出现了两次</translation>
    </message>
    <message>
        <source>row {value} ({name}): {problem}</source>
        <translation>第 {value} 行（{name}）：{problem}</translation>
    </message>
    <message>
        <source>write dynamic axes as 0:batch, 1:sequence (empty = all static)</source>
        <translation>动态轴写作 0:batch, 1:sequence（留空 = 全部静态）</translation>
    </message>
</context>
<context>
    <name>SourceInfo</name>
    <message>
        <source>, max abs {max_abs}, max rel {max_rel}</source>
        <translation>，最大绝对误差 {max_abs}，最大相对误差 {max_rel}</translation>
    </message>
    <message>
        <source>; TVM {tvm} ms vs ORT {ort} ms on the compile host</source>
        <translation>；编译主机上 TVM {tvm} ms 对比 ORT {ort} ms</translation>
    </message>
    <message>
        <source>runtime: tvm {version} — {library} ({kind}, {arch}), target {target}
parity vs ONNX Runtime: {status}{figures}{latency}</source>
        <translation>运行时：tvm {version} — {library}（{kind}，{arch}），目标 {target}
与 ONNX Runtime 的一致性：{status}{figures}{latency}</translation>
    </message>
    <message>
        <source>unknown arch</source>
        <translation>未知架构</translation>
    </message>
    <message>
        <source>⚠ built for {arch}, board {board} is {board_arch}: packaging is refused unless forced; compile with --target {board}</source>
        <translation>⚠ 为 {arch} 构建，而开发板 {board} 是 {board_arch}：除非强制，否则拒绝打包；请用 --target {board} 编译</translation>
    </message>
</context>
<context>
    <name>SourceStep</name>
    <message>
        <source>Pick a HuggingFace model saved with save_pretrained: one already in the workspace, any model folder on disk, or a built-in tiny sample (random weights, no download).</source>
        <translation>选择用 save_pretrained 保存的 HuggingFace 模型：工作区中已有的模型、磁盘上的任意模型文件夹，或内置的小型示例（随机权重，无需下载）。</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Workspace model</source>
        <translation>工作区模型</translation>
    </message>
    <message>
        <source>Model folder</source>
        <translation>模型文件夹</translation>
    </message>
    <message>
        <source>Built-in sample</source>
        <translation>内置示例</translation>
    </message>
    <message>
        <source>/path/to/hf-model  (holds config.json and the weights)</source>
        <translation>/path/to/hf-model（包含 config.json 和权重）</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>(no HuggingFace models in the workspace)</source>
        <translation>（工作区中没有 HuggingFace 模型）</translation>
    </message>
    <message>
        <source>HuggingFace model folder</source>
        <translation>HuggingFace 模型文件夹</translation>
    </message>
    <message>
        <source>already written</source>
        <translation>已写入</translation>
    </message>
    <message>
        <source>will be written</source>
        <translation>将写入</translation>
    </message>
    <message>
        <source>{state} to {dest}</source>
        <translation>{state}到 {dest}</translation>
    </message>
    <message>
        <source>choose a model of the workspace</source>
        <translation>选择工作区中的一个模型</translation>
    </message>
    <message>
        <source>enter the model folder</source>
        <translation>请输入模型文件夹</translation>
    </message>
    <message>
        <source>a folder written by save_pretrained (config.json and weights)</source>
        <translation>由 save_pretrained 写出的文件夹（config.json 和权重）</translation>
    </message>
    <message>
        <source>no sample models are available</source>
        <translation>没有可用的示例模型</translation>
    </message>
    <message>
        <source>{path} does not exist</source>
        <translation>{path} 不存在</translation>
    </message>
    <message>
        <source>check the path</source>
        <translation>请检查路径</translation>
    </message>
    <message>
        <source>{path} is a file, not a model folder</source>
        <translation>{path} 是文件，不是模型文件夹</translation>
    </message>
    <message>
        <source>choose the folder that holds config.json</source>
        <translation>请选择包含 config.json 的文件夹</translation>
    </message>
    <message>
        <source>{path} has no config.json: not a HuggingFace model folder</source>
        <translation>{path} 中没有 config.json：不是 HuggingFace 模型文件夹</translation>
    </message>
    <message>
        <source>choose a folder written by save_pretrained</source>
        <translation>请选择由 save_pretrained 写出的文件夹</translation>
    </message>
</context>
<context>
    <name>StaticDimsDialog</name>
    <message>
        <source>Make dims static</source>
        <translation>固定动态维度</translation>
    </message>
    <message>
        <source>Fix symbolic dims of the model inputs to concrete values. Shapes are re-inferred and the model is re-inspected afterwards. Leave a field empty to keep that dim dynamic.</source>
        <translation>将模型输入的符号维度固定为具体数值。之后会重新推断形状并重新检查模型。留空的字段保持动态。</translation>
    </message>
    <message>
        <source>The inputs have no named dynamic dims.</source>
        <translation>输入中没有命名的动态维度。</translation>
    </message>
</context>
<context>
    <name>StatusLine</name>
    <message>
        <source>no model</source>
        <translation>无模型</translation>
    </message>
    <message>
        <source>no jobs run yet</source>
        <translation>尚未运行任务</translation>
    </message>
    <message>
        <source>no servers or agents</source>
        <translation>无服务器或代理</translation>
    </message>
    <message>
        <source>model: {name} ({kind})</source>
        <translation>模型：{name}（{kind}）</translation>
    </message>
    <message>
        <source>no model selected</source>
        <translation>未选择模型</translation>
    </message>
    <message>
        <source>last job - {text}</source>
        <translation>上一个任务 - {text}</translation>
    </message>
</context>
<context>
    <name>Step</name>
    <message>
        <source>Export options</source>
        <translation>导出选项</translation>
    </message>
    <message>
        <source>Options</source>
        <translation>选项</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Exporting</source>
        <translation>正在导出</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Signature and modalities</source>
        <translation>签名与模态</translation>
    </message>
    <message>
        <source>Signature</source>
        <translation>签名</translation>
    </message>
    <message>
        <source>Choose the model</source>
        <translation>选择模型</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
</context>
<context>
    <name>TargetChip</name>
    <message>
        <source>RUNS</source>
        <translation>可运行</translation>
    </message>
    <message>
        <source>RISKY</source>
        <translation>有风险</translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>TOOL CRASHED</source>
        <translation>工具崩溃</translation>
    </message>
    <message>
        <source>UNKNOWN</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>{target}: not inspected yet</source>
        <translation>{target}：尚未检查</translation>
    </message>
    <message>
        <source>FAIL · {n} unsupp.</source>
        <translation>失败 · {n} 不支持</translation>
    </message>
    <message>
        <source>RISKY · {n} risky</source>
        <translation>有风险 · {n} 风险</translation>
    </message>
    <message>
        <source>UNKNOWN · no op list</source>
        <translation>未知 · 无算子列表</translation>
    </message>
    <message>
        <source>PASS</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>nodes: {counts}</source>
        <translation>节点：{counts}</translation>
    </message>
    <message>
        <source>RUNS · {n} on host</source>
        <translation>可运行 · {n} 在主机</translation>
    </message>
    <message>
        <source>{summary}
verified by {by}: the tool wins over the profile
the profile ({name}) said: {static}</source>
        <translation>{summary}
由 {by} 验证：以工具结果为准，而非平台配置
平台配置（{name}）的结论：{static}</translation>
    </message>
</context>
<context>
    <name>TokenRow</name>
    <message>
        <source>Token file</source>
        <translation>令牌文件</translation>
    </message>
    <message>
        <source>the agent&apos;s token file (e.g. a copy of /etc/studio-agent/token)</source>
        <translation>代理的令牌文件（例如 /etc/studio-agent/token 的副本）</translation>
    </message>
    <message>
        <source>choose the agent&apos;s token file</source>
        <translation>选择代理的令牌文件</translation>
    </message>
    <message>
        <source>Use this token</source>
        <translation>使用此令牌</translation>
    </message>
    <message>
        <source>save this token file for the selected agent; it is checked at the next poll</source>
        <translation>为所选代理保存该令牌文件；下次轮询时会检查它</translation>
    </message>
    <message>
        <source>Agent token file</source>
        <translation>代理令牌文件</translation>
    </message>
    <message>
        <source>enter the agent&apos;s token file</source>
        <translation>请输入代理的令牌文件</translation>
    </message>
    <message>
        <source>copy /etc/studio-agent/token from the board</source>
        <translation>从开发板复制 /etc/studio-agent/token</translation>
    </message>
    <message>
        <source>token file {path} does not exist or is empty</source>
        <translation>令牌文件 {path} 不存在或为空</translation>
    </message>
</context>
<context>
    <name>TritonPage</name>
    <message>
        <source>Repository</source>
        <translation>仓库</translation>
    </message>
    <message>
        <source>Local server</source>
        <translation>本地服务器</translation>
    </message>
    <message>
        <source>checking the repository</source>
        <translation>正在检查模型仓库</translation>
    </message>
    <message>
        <source>building {name} into {repo}…</source>
        <translation>正在将 {name} 构建到 {repo}…</translation>
    </message>
    <message>
        <source>Build Triton repo {name}</source>
        <translation>构建 Triton 仓库 {name}</translation>
    </message>
    <message>
        <source>built {models}; clients call &apos;{entry}&apos;</source>
        <translation>已构建 {models}；客户端调用“{entry}”</translation>
    </message>
    <message>
        <source>note: {note}</source>
        <translation>注意：{note}</translation>
    </message>
    <message>
        <source>built Triton repository {repo}: {models}</source>
        <translation>已构建 Triton 模型仓库 {repo}：{models}</translation>
    </message>
    <message>
        <source>build cancelled</source>
        <translation>构建已取消</translation>
    </message>
    <message>
        <source>Build failed: see the message above.</source>
        <translation>构建失败：请查看上方的消息。</translation>
    </message>
    <message>
        <source>choose a repository folder to check</source>
        <translation>选择要检查的仓库文件夹</translation>
    </message>
    <message>
        <source>checking {repo}</source>
        <translation>正在检查 {repo}</translation>
    </message>
    <message>
        <source>Check Triton repo {name}</source>
        <translation>检查 Triton 仓库 {name}</translation>
    </message>
    <message>
        <source>checked {name}: {n} error(s)</source>
        <translation>已检查 {name}：{n} 个错误</translation>
    </message>
    <message>
        <source>repository</source>
        <translation>模型仓库</translation>
    </message>
    <message>
        <source>build a repository first (or choose an existing one)</source>
        <translation>请先构建仓库（或选择已有仓库）</translation>
    </message>
    <message>
        <source>Serve {name} locally</source>
        <translation>在本地部署 {name}</translation>
    </message>
    <message>
        <source>repository {repo}</source>
        <translation>模型仓库 {repo}</translation>
    </message>
    <message>
        <source>; this CPU server has no ONNX Runtime backend, so these models are served through a generated Python-backend copy (same ONNX file, run by onnxruntime): {models}</source>
        <translation>；此 CPU 服务器没有 ONNX Runtime 后端，以下模型通过生成的 Python 后端副本提供服务（同一个 ONNX 文件，由 onnxruntime 运行）：{models}</translation>
    </message>
    <message>
        <source>local tritonserver ready: HTTP {http}, gRPC {grpc}, metrics {metrics}</source>
        <translation>本地 tritonserver 已就绪：HTTP {http}，gRPC {grpc}，指标 {metrics}</translation>
    </message>
    <message>
        <source>local tritonserver (pid {pid}) ready</source>
        <translation>本地 tritonserver（pid {pid}）已就绪</translation>
    </message>
    <message>
        <source>Stop local tritonserver</source>
        <translation>停止本地 tritonserver</translation>
    </message>
    <message>
        <source>stopped on the Triton page</source>
        <translation>已在 Triton 页面停止</translation>
    </message>
    <message>
        <source>local tritonserver stopped (exit code {code})</source>
        <translation>本地 tritonserver 已停止（退出码 {code}）</translation>
    </message>
    <message>
        <source>stopping tritonserver: {error}</source>
        <translation>停止 tritonserver：{error}</translation>
    </message>
    <message>
        <source>tritonserver exited (code {code})</source>
        <translation>tritonserver 已退出（退出码 {code}）</translation>
    </message>
    <message>
        <source>tritonserver exited unexpectedly (code {code}); its last log lines are below</source>
        <translation>tritonserver 意外退出（代码 {code}）；最后几行日志见下方</translation>
    </message>
    <message>
        <source>local tritonserver exited (code {code})</source>
        <translation>本地 tritonserver 已退出（退出码 {code}）</translation>
    </message>
    <message>
        <source>see the server log on the Triton page</source>
        <translation>请在 Triton 页面查看服务器日志</translation>
    </message>
    <message>
        <source>stopped with the window</source>
        <translation>随窗口关闭而停止</translation>
    </message>
</context>
<context>
    <name>TritonServer</name>
    <message>
        <source>Starting tritonserver…</source>
        <translation>正在启动 tritonserver…</translation>
    </message>
    <message>
        <source>● Running</source>
        <translation>● 运行中</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message>
        <source>Not running.</source>
        <translation>未运行。</translation>
    </message>
    <message>
        <source>✖ Exited</source>
        <translation>✖ 已退出</translation>
    </message>
    <message>
        <source>✖ Failed to start</source>
        <translation>✖ 启动失败</translation>
    </message>
    <message>
        <source>starting tritonserver on {url} ({mode} mode)</source>
        <translation>正在 {url} 上启动 tritonserver（{mode} 模式）</translation>
    </message>
    <message>
        <source>stopping tritonserver</source>
        <translation>正在停止 tritonserver</translation>
    </message>
</context>
<context>
    <name>TryItPanel</name>
    <message>
        <source>Try it: generate with the exported parts on this machine</source>
        <translation>试用：在本机上用导出的各部分进行生成</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>图像</translation>
    </message>
    <message>
        <source>Images (*.png *.jpg *.jpeg *.bmp *.webp)</source>
        <translation>图像 (*.png *.jpg *.jpeg *.bmp *.webp)</translation>
    </message>
    <message>
        <source>Audio</source>
        <translation>音频</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source>Max new tokens</source>
        <translation>最大新 token 数</translation>
    </message>
    <message>
        <source>Generate</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>the answer streams here</source>
        <translation>回答会以流式显示在这里</translation>
    </message>
    <message>
        <source>optional for a transcript</source>
        <translation>转写时可选</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>{title} to try</source>
        <translation>要试用的{title}</translation>
    </message>
    <message>
        <source>generating…</source>
        <translation>正在生成…</translation>
    </message>
    <message>
        <source>generating with {name}</source>
        <translation>正在用 {name} 生成</translation>
    </message>
    <message>
        <source>Try {name}</source>
        <translation>试用 {name}</translation>
    </message>
    <message>
        <source>{n} tokens ({finish_reason}) · TTFT {ttft_ms:.1f} ms · {tokens_per_s:.1f} tokens/s · {runtime}</source>
        <translation>{n} 个 token（{finish_reason}）· 首 token 时间 {ttft_ms:.1f} ms · {tokens_per_s:.1f} tokens/s · {runtime}</translation>
    </message>
</context>
<context>
    <name>Verdicts</name>
    <message>
        <source>supported</source>
        <translation>支持</translation>
    </message>
    <message>
        <source>risky</source>
        <translation>有风险</translation>
    </message>
    <message>
        <source>unsupported</source>
        <translation>不支持</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>not inspected</source>
        <translation>未检查</translation>
    </message>
</context>
<context>
    <name>VerifyFlow</name>
    <message>
        <source>Verify with the real toolchain</source>
        <translation>用真实工具链验证</translation>
    </message>
    <message>
        <source>run every available verifier (ONNX Runtime session, TVM import, OpenVINO query, plugins&apos; tools) and show where they disagree with the static profiles
CLI: {CLI_VERIFY}</source>
        <translation>运行所有可用的验证器（ONNX Runtime 会话、TVM 导入、OpenVINO 查询、插件工具），并显示它们与静态平台配置不一致之处
CLI: {CLI_VERIFY}</translation>
    </message>
    <message>
        <source>Not verified yet: press “Verify with the real toolchain”.</source>
        <translation>尚未验证：请点击“用真实工具链验证”。</translation>
    </message>
    <message>
        <source>verifiers for these targets</source>
        <translation>这些目标平台的验证器</translation>
    </message>
    <message>
        <source>Ready to verify with {n} tool(s) — {tools}.</source>
        <translation>可用 {n} 个工具验证 — {tools}。</translation>
    </message>
    <message>
        <source>No tool installed can verify these targets.</source>
        <translation>已安装的工具都无法验证这些目标平台。</translation>
    </message>
    <message>
        <source> Unavailable: {tools}.</source>
        <translation> 不可用：{tools}。</translation>
    </message>
    <message>
        <source> No verifier for {targets}: their verdicts stay the profiles&apos;.</source>
        <translation> {targets} 没有验证器：其判定保持为平台配置的结论。</translation>
    </message>
    <message>
        <source> Tools that build at fixed sizes (rknn) use the static shapes below ({n} input(s), pre-filled from the model: edit them before pressing Verify).</source>
        <translation> 按固定尺寸构建的工具（rknn）使用下方的静态形状（{n} 个输入，已按模型预填：请在点击“验证”前修改）。</translation>
    </message>
    <message>
        <source>warning: {note}</source>
        <translation>警告：{note}</translation>
    </message>
    <message>
        <source>verifying with the real toolchains…</source>
        <translation>正在用真实工具链验证…</translation>
    </message>
    <message>
        <source>verify {name}</source>
        <translation>验证 {name}</translation>
    </message>
    <message>
        <source>verification stopped</source>
        <translation>验证已停止</translation>
    </message>
    <message>
        <source>{target}: nothing folded: {skipped}</source>
        <translation>{target}：未合并任何内容：{skipped}</translation>
    </message>
    <message>
        <source>folded {n} op(s) of {target} into {path}: {ops} — re-inspecting with it (CLI: {command})</source>
        <translation>已将 {target} 的 {n} 个算子合并到 {path}：{ops} — 正在用它重新检查（命令行：{command}）</translation>
    </message>
</context>
<context>
    <name>VerifyPanel</name>
    <message>
        <source> for {target}</source>
        <translation>（{target}）</translation>
    </message>
    <message>
        <source>unavailable</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>plugin {name}: failed to load: {error}</source>
        <translation>插件 {name}：加载失败：{error}</translation>
    </message>
    <message>
        <source>Press “Verify with the real toolchain” (CLI: {CLI_VERIFY}) to ask the real tools and compare them with the static profiles.</source>
        <translation>点击“用真实工具链验证”（CLI: {CLI_VERIFY}），询问真实工具并与静态平台配置对比。</translation>
    </message>
    <message>
        <source>Static shapes (tools that build at fixed sizes: rknn)</source>
        <translation>静态形状（按固定尺寸构建的工具：rknn）</translation>
    </message>
    <message>
        <source>all input dims are static</source>
        <translation>所有输入维度都是静态的</translation>
    </message>
    <message>
        <source>the input shapes the tools build at (rknn-toolkit2 builds static graphs only): NAME=D,D,..., several separated by &apos;;&apos;
CLI: --shape NAME=D,D,...</source>
        <translation>工具构建时使用的输入形状（rknn-toolkit2 只能构建静态图）：NAME=D,D,...，多个之间用 &apos;;&apos; 分隔
CLI: --shape NAME=D,D,...</translation>
    </message>
    <message>
        <source>Fold into workspace profile</source>
        <translation>合并到工作区平台配置</translation>
    </message>
    <message>
        <source>write the tool&apos;s answer for the disagreeing ops as WORKSPACE/targets/&lt;target&gt;.yaml, then re-inspect with it
CLI: {CLI_FOLD}</source>
        <translation>将工具对不一致算子的结论写入 WORKSPACE/targets/&lt;target&gt;.yaml，然后用它重新检查
CLI: {CLI_FOLD}</translation>
    </message>
    <message>
        <source>CLI: {command}</source>
        <translation>命令行：{command}</translation>
    </message>
    <message>
        <source>{runs} tool run(s); {n} node(s) where the tool and the profile disagree (the tool wins: it ran the model)</source>
        <translation>{runs} 次工具运行；{n} 个节点上工具与平台配置不一致（以工具为准：它实际运行了模型）</translation>
    </message>
    <message>
        <source>no verifier could run for these targets (see why below)</source>
        <translation>这些目标平台都没有可运行的验证器（原因见下方）</translation>
    </message>
    <message>
        <source>{target} · no verifier</source>
        <translation>{target} · 无验证器</translation>
    </message>
    <message>
        <source>list only</source>
        <translation>仅列表</translation>
    </message>
    <message>
        <source>no tool ran</source>
        <translation>未运行工具</translation>
    </message>
    <message>
        <source>{t}: no verifier; verdicts are from the list ({src})</source>
        <translation>{t}：没有验证器；判定来自列表（{src}）</translation>
    </message>
    <message>
        <source>crashed (a fault of the tool, not a verdict on the model): {error}</source>
        <translation>崩溃（工具自身的故障，不是对模型的判定）：{error}</translation>
    </message>
    <message>
        <source>could not run: {error}</source>
        <translation>无法运行：{error}</translation>
    </message>
    <message>
        <source>refuses the model</source>
        <translation>拒绝该模型</translation>
    </message>
    <message>
        <source>accepts the model</source>
        <translation>接受该模型</translation>
    </message>
    <message>
        <source>, {n} node(s) on the host</source>
        <translation>，{n} 个节点在主机上运行</translation>
    </message>
    <message>
        <source>agrees</source>
        <translation>一致</translation>
    </message>
    <message>
        <source>DISAGREES</source>
        <translation>不一致</translation>
    </message>
    <message>
        <source>fail</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>no failure</source>
        <translation>无失败</translation>
    </message>
    <message>
        <source>tool: {value}
profile: {value2}</source>
        <translation>工具：{value}
平台配置：{value2}</translation>
    </message>
    <message>
        <source>{profile}; profile {value}</source>
        <translation>{profile}；平台配置 {value}</translation>
    </message>
    <message>
        <source>sources</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>tool: {value}</source>
        <translation>工具：{value}</translation>
    </message>
    <message>
        <source>profile: {value}</source>
        <translation>平台配置：{value}</translation>
    </message>
    <message>
        <source>disagree</source>
        <translation>不一致</translation>
    </message>
    <message>
        <source>note: {note}</source>
        <translation>注意：{note}</translation>
    </message>
    <message>
        <source>nothing to fold: no tool disagrees with its profile
CLI: {CLI_FOLD}</source>
        <translation>无可合并内容：没有工具与其平台配置不一致
CLI: {CLI_FOLD}</translation>
    </message>
    <message>
        <source>open a workspace to fold into (its targets/ folder)
CLI: {CLI_FOLD}</source>
        <translation>请打开一个工作区用于合并（其 targets/ 文件夹）
CLI: {CLI_FOLD}</translation>
    </message>
</context>
<context>
    <name>WorkloadFields</name>
    <message>
        <source>inference</source>
        <translation>推理</translation>
    </message>
    <message>
        <source>generation</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>inference: KServe v2 /infer; generation: /generate_stream (time to first token, inter-token latency, output tokens/s)</source>
        <translation>推理：KServe v2 /infer；生成：/generate_stream（首 token 时间、token 间延迟、输出 tokens/s）</translation>
    </message>
    <message>
        <source>Workload</source>
        <translation>负载类型</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation>最大 token 数</translation>
    </message>
</context>
<context>
    <name>WorkspaceActions</name>
    <message>
        <source>{error}. Kept it as {backup} and started a new workspace file with the {n} model(s) found in models/</source>
        <translation>{error}。已将其保留为 {backup}，并用 models/ 中找到的 {n} 个模型新建了工作区文件</translation>
    </message>
    <message>
        <source>devices and artifacts from the old file are in the backup</source>
        <translation>旧文件中的设备和产物在备份中</translation>
    </message>
    <message>
        <source>opened workspace {root}</source>
        <translation>已打开工作区 {root}</translation>
    </message>
    <message>
        <source>Preparing demo workspace</source>
        <translation>正在准备演示工作区</translation>
    </message>
    <message>
        <source>New workspace: choose an empty folder</source>
        <translation>新建工作区：选择一个空文件夹</translation>
    </message>
    <message>
        <source>Open workspace folder</source>
        <translation>打开工作区文件夹</translation>
    </message>
    <message>
        <source>Add a HuggingFace model folder or ONNX export folder</source>
        <translation>添加 HuggingFace 模型文件夹或 ONNX 导出文件夹</translation>
    </message>
    <message>
        <source>Add an ONNX model</source>
        <translation>添加 ONNX 模型</translation>
    </message>
    <message>
        <source>ONNX models (*.onnx)</source>
        <translation>ONNX 模型 (*.onnx)</translation>
    </message>
    <message>
        <source>no workspace is open to add models to</source>
        <translation>没有打开的工作区可添加模型</translation>
    </message>
    <message>
        <source>open or create a workspace first (File &gt; New workspace)</source>
        <translation>请先打开或新建一个工作区（文件 &gt; 新建工作区）</translation>
    </message>
    <message>
        <source>added model {name} ({kind}) from {path}</source>
        <translation>已从 {path} 添加模型 {name}（{kind}）</translation>
    </message>
    <message>
        <source>added {join}</source>
        <translation>已添加 {join}</translation>
    </message>
</context>
<context>
    <name>bundle_actions</name>
    <message>
        <source>cannot check {name}: this studio holds no signing keys</source>
        <translation>无法检查 {name}：此 Studio 没有任何签名密钥</translation>
    </message>
    <message>
        <source>create or import the key that signed it (Signing key &gt; New key, or copy its .key/.pub into the studio&apos;s keys folder)</source>
        <translation>创建或导入为其签名的密钥（签名密钥 &gt; 新建密钥，或将其 .key/.pub 复制到 Studio 的密钥文件夹）</translation>
    </message>
    <message>
        <source>  (FORCED)</source>
        <translation>  （强制）</translation>
    </message>
    <message>
        <source>target {target}: {verdict}{forced}; {files} files, {size} MB; signer {signer}; verified in {seconds} s; serves {models}</source>
        <translation>目标 {target}：{verdict}{forced}；{files} 个文件，{size} MB；签名者 {signer}；验证用时 {seconds} 秒；提供 {models}</translation>
    </message>
    <message>
        <source>runtime: tvm {version} ({library}, {kind}); parity {status}</source>
        <translation>运行时：tvm {version}（{library}，{kind}）；一致性 {status}</translation>
    </message>
    <message>
        <source>source: OpenSSF signature by {signer} verified</source>
        <translation>来源：{signer} 的 OpenSSF 签名已验证</translation>
    </message>
    <message>
        <source>OpenSSF: model/ signed by {signer} ({file})</source>
        <translation>OpenSSF：model/ 由 {signer} 签名（{file}）</translation>
    </message>
    <message>
        <source>warning: {warning}</source>
        <translation>警告：{warning}</translation>
    </message>
    <message>
        <source>Deploy an existing bundle</source>
        <translation>部署已有的部署包</translation>
    </message>
    <message>
        <source>Bundles (*.tar)</source>
        <translation>部署包 (*.tar)</translation>
    </message>
</context>
<context>
    <name>search</name>
    <message>
        <source>Page</source>
        <translation>页面</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标平台</translation>
    </message>
    <message>
        <source>no unique match for &apos;{text}&apos;</source>
        <translation>&apos;{text}&apos; 没有唯一匹配</translation>
    </message>
    <message>
        <source>nothing named &apos;{text}&apos;</source>
        <translation>没有名为 &apos;{text}&apos; 的项</translation>
    </message>
</context>
</TS>

<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
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
</context>
<context>
    <name>LogPanel</name>
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
        <source>Jobs</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Log / Problems</source>
        <translation>日志 / 问题</translation>
    </message>
    <message>
        <source>cancelling {n} job(s)…</source>
        <translation>正在取消 {n} 个任务…</translation>
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
</TS>

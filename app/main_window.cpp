#include "app/main_window.h"

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QLayout>
#include <QListView>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QVBoxLayout>

#include <utility>

#include "app/app_icon.h"
#include "app/banner.h"
#include "app/chat_controller.h"
#include "app/chat_model.h"
#include "app/chat_view.h"
#include "app/conversation_dock.h"
#include "app/conversation_settings.h"
#include "app/engine_bridge.h"
#include "app/input_box.h"
#include "app/interrupted_answers.h"
#include "app/log_model.h"
#include "app/model_bar.h"
#include "app/perf_dock.h"
#include "app/profiler_dock.h"
#include "app/prompt_library_panel.h"
#include "app/prompted_backend.h"
#include "app/remote_endpoint_dialog.h"
#include "app/serve_toggle.h"
#include "app/stats_history_model.h"
#include "app/storage_service.h"
#include "app/token_counter.h"
#include "engine/core/log.h"
#include "models/catalog.h"

namespace hearth::app {

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(QStringLiteral("Hearth"));
  setWindowIcon(app_icon());
  log_ = new LogModel(this);
  log_sink_ = make_log_sink(log_);
  log::add_sink(log_sink_);
  settings_ = load_app_settings(options.settings_path);  // after the sink: its warnings reach the log panel
  // Before the engine thread and the model bar read it (models::models_dir()).
  if (!settings_.values.models_dir.empty()) {
    qputenv("HEARTH_MODELS_DIR", QByteArray::fromStdString(settings_.values.models_dir));
  }
  storage_ = std::make_unique<StorageService>(options.database_path.isEmpty() ? default_database_path()
                                                                              : options.database_path);
  engine_ = std::make_unique<EngineBridge>();
  prompted_ = std::make_unique<PromptedBackend>(engine_.get());
  controller_ = std::make_unique<ChatController>(storage_.get(), prompted_.get());
  history_ = new StatsHistoryModel(this);
  generation_ = new ConversationSettingsKeeper(
      storage_.get(), [this] { return generationDefaults(); }, this);
  buildCentral();
  buildDocks();
  buildMenus();
  connectParts();
  applySettings(options);
  setGenerating(false);
  if (options.load_model) startModel(options);
}

MainWindow::~MainWindow() {
  delete std::exchange(generation_, nullptr);  // saves a pending edit while the storage still runs
  controller_.reset();                         // finishes a streaming answer with the text shown so far
  prompted_.reset();
  engine_.reset();
  storage_.reset();
  log::remove_sink(log_sink_);
}

QString MainWindow::initialModel(const MainWindowOptions& options) const {
  if (!options.model.isEmpty()) return options.model;
  if (!settings_.values.last_model.empty()) return QString::fromStdString(settings_.values.last_model);
  const auto path = models::resolve_model(models::builtin_catalog().default_entry().name);
  return path ? QString::fromStdString(path->string())
              : QString::fromStdString(models::builtin_catalog().default_entry().name);
}

void MainWindow::buildCentral() {
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 6);
  layout->setSpacing(4);
  model_bar_ = new ModelBar(central);
  layout->addWidget(model_bar_);
  banner_ = new Banner(central);
  layout->addWidget(banner_);
  chat_view_ = new ChatView(controller_->chatModel(), central);
  layout->addWidget(chat_view_, 1);
  auto* input_row = new QHBoxLayout;
  input_row->setContentsMargins(8, 0, 8, 0);
  input_ = new InputBox(central);
  input_row->addWidget(input_, 1);
  auto* buttons = new QVBoxLayout;
  send_ = new QPushButton(tr("Send"), central);
  send_->setObjectName(QStringLiteral("sendButton"));
  send_->setDefault(true);
  stop_ = new QPushButton(tr("Stop"), central);
  stop_->setObjectName(QStringLiteral("stopButton"));
  regenerate_ = new QPushButton(tr("Regenerate"), central);
  regenerate_->setObjectName(QStringLiteral("regenerateButton"));
  for (QPushButton* b : {send_, stop_, regenerate_}) buttons->addWidget(b);
  buttons->addWidget(new TokenCounter(input_, prompted_.get(), central));
  input_row->addLayout(buttons);
  layout->addLayout(input_row);
  setCentralWidget(central);
}

void MainWindow::buildDocks() {
  conversations_ = new ConversationDock(controller_->conversationModel(), this);
  addDockWidget(Qt::LeftDockWidgetArea, conversations_);
  perf_dock_ = new PerfDock(history_, this);
  addDockWidget(Qt::RightDockWidgetArea, perf_dock_);
  perf_dock_->hide();
  log_dock_ = new QDockWidget(tr("Log"), this);
  log_dock_->setObjectName(QStringLiteral("logDock"));
  auto* log_view = new QListView(log_dock_);
  log_view->setObjectName(QStringLiteral("logView"));
  log_view->setModel(log_);
  log_view->setUniformItemSizes(true);
  log_view->setFont(QFont(QStringLiteral("monospace")));
  connect(log_, &QAbstractItemModel::rowsInserted, log_view, [log_view] { log_view->scrollToBottom(); });
  log_dock_->setWidget(log_view);
  addDockWidget(Qt::BottomDockWidgetArea, log_dock_);
  log_dock_->hide();
  prompt_dock_ = new QDockWidget(tr("Prompts"), this);
  prompt_dock_->setObjectName(QStringLiteral("promptDock"));
  prompt_dock_->setWidget(new PromptLibraryPanel(storage_.get(), controller_.get(), prompt_dock_));
  addDockWidget(Qt::RightDockWidgetArea, prompt_dock_);
  generation_dock_ = new QDockWidget(tr("Generation"), this);
  generation_dock_->setObjectName(QStringLiteral("generationDock"));
  generation_panel_ = new GenerationPanel;
  auto* scroll = new QScrollArea(generation_dock_);  // fits a short window
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(generation_panel_);
  generation_dock_->setWidget(scroll);
  addDockWidget(Qt::RightDockWidgetArea, generation_dock_);
  tabifyDockWidget(generation_dock_, perf_dock_);  // one column on the right, a tab each
  tabifyDockWidget(generation_dock_, prompt_dock_);
  prompt_dock_->hide();  // View > Prompts shows it, as a tab of that column
  profiler_dock_ = new ProfilerDock(this);
  addDockWidget(Qt::RightDockWidgetArea, profiler_dock_);
  tabifyDockWidget(generation_dock_, profiler_dock_);
  profiler_dock_->hide();  // View > Profiler; the engine profiles while it is open
  generation_dock_->raise();
  resizeDocks({conversations_, generation_dock_}, {240, 300}, Qt::Horizontal);
}

void MainWindow::connectParts() {
  auto* c = controller_.get();
  auto* e = engine_.get();
  connect(input_, &InputBox::submitted, this, &MainWindow::sendInput);
  connect(send_, &QPushButton::clicked, this, &MainWindow::sendInput);
  connect(stop_, &QPushButton::clicked, c, &ChatController::stop);
  connect(regenerate_, &QPushButton::clicked, c, &ChatController::regenerate);
  connect(chat_view_, &ChatView::siblingRequested, c, &ChatController::switchSibling);
  connect(chat_view_, &ChatView::editRequested, c, &ChatController::editMessage);
  connect(chat_view_, &ChatView::continueRequested, this, [this](qint64 id) {
    if (const auto& m = engine_->model(); m && !m->continues) {
      return banner_->showError(tr("%1 cannot continue an answer: only a server that honours continue_final_message "
                                   "(hearth-server) can. Regenerate asks it for a new answer.")
                                    .arg(m->endpoint));
    }
    if (!continue_answer(*controller_, *prompted_, id)) banner_->showError(tr("Wait for the current answer first."));
  });
  connect(c, &ChatController::errorOccurred, prompted_.get(), &PromptedBackend::disarm);
  connect(c, &ChatController::generatingChanged, this, &MainWindow::setGenerating);
  connect(c->chatModel(), &QAbstractItemModel::modelReset, this, [this] { setGenerating(controller_->generating()); });
  connect(c, &ChatController::errorOccurred, banner_, &Banner::showError);
  // A message the store refused comes back to the box (before anything typed since).
  connect(c, &ChatController::unsentText, this, [this](const QString& text) {
    const QString typed = input_->toPlainText();
    input_->setPlainText(typed.isEmpty() ? text : text + QStringLiteral("\n") + typed);
    input_->moveCursor(QTextCursor::End);
  });
  connect(c, &ChatController::contextUsage, model_bar_, &ModelBar::setContextUsed);
  connect(c, &ChatController::answerFinished, history_, &StatsHistoryModel::addAnswer);
  connect(c, &ChatController::conversationOpened, conversations_, &ConversationDock::showConversation);
  connect(c, &ChatController::messageShown, chat_view_, &ChatView::highlightMessage);
  connect(conversations_, &ConversationDock::resultOpened, input_, [this] { input_->setFocus(); });
  connect(chat_view_, &ChatView::regenerateRequested, c,
          [c](qint64) { c->regenerate(); });  // offered on the last answer
  connect(c, &ChatController::conversationDeleted, this, [this](qint64 id, const QString& title) {
    banner_->showNotice(tr("Deleted \"%1\".").arg(title), tr("Undo"),
                        [this, id] { controller_->restoreConversation(id); });
  });
  connect(conversations_, &ConversationDock::conversationSelected, c, &ChatController::openConversation);
  connect(conversations_, &ConversationDock::newRequested, c, &ChatController::newConversation);
  connect(conversations_, &ConversationDock::renameRequested, c, &ChatController::renameConversation);
  connect(conversations_, &ConversationDock::deleteRequested, c, &ChatController::deleteConversation);
  connect(conversations_, &ConversationDock::searchChanged, c, &ChatController::search);
  connect(storage_.get(), &StorageService::opened, this, [this](int recovered) {
    controller_->reloadConversations();
    if (restore_conversation_ != 0) controller_->openConversation(restore_conversation_);
    if (recovered > 0) offer_interrupted_answers(*storage_, *banner_, *controller_);
  });
  connect(storage_.get(), &StorageService::readOnlyDatabase, banner_, &Banner::showError);
  connect(model_bar_, &ModelBar::loadRequested, this, &MainWindow::loadModel);
  connect(model_bar_, &ModelBar::unloadRequested, e, &EngineBridge::unloadModel);
  connect(model_bar_, &ModelBar::deviceChosen, this, [this](const QString& device) {
    settings_.values.device = device.toStdString();
    saveSettings();
    const auto& m = engine_->model();
    if (m && m->endpoint.isEmpty()) loadModel(m->path);  // the new device takes effect now
  });
  connect(model_bar_, &ModelBar::remoteRequested, this, &MainWindow::askForRemoteEndpoint);
#if defined(HEARTH_APP_HAVE_INSTALL)
  model_bar_->setManagerAvailable(true);
  connect(model_bar_, &ModelBar::managerRequested, this, [this] { showModelManager(); });
  connect(model_bar_, &ModelBar::loadOptionsRequested, this, &MainWindow::openLoadOptions);
#endif
  auto* serve = new ServeToggle(*engine_, model_bar_);  // "Serve this model" and its URL, at the bar's end
  model_bar_->layout()->addWidget(serve);
  connect(serve, &ServeToggle::failed, banner_, [this](const QString& message) { banner_->showError(message); });
  connect(e, &EngineBridge::loadStarted, model_bar_, &ModelBar::setLoading);
  connect(e, &EngineBridge::defaultsChosen, this, &MainWindow::adoptChosenDefaults);
  connect(e, &EngineBridge::modelLoaded, this, [this](const LoadedModel& m) {
    model_bar_->setLoaded(m);
    controller_->recountContext();  // an answer without a record is counted by the model's tokenizer
    if (auto* counter = findChild<TokenCounter*>()) counter->recount();
    rememberBackend(m);
    // "Model — Hearth": the platform appends the application's display name only when the title lacks it.
    setWindowTitle(QStringLiteral("%1 \u2014 Hearth").arg(m.name));
    if (failed_load_.isEmpty()) banner_->clearError();  // an older load error is no longer true
    failed_load_.clear();
    setGenerating(controller_->generating());
  });
  connect(e, &EngineBridge::loadFailed, this, [this](const QString& path, const QString& message) {
    // The worker logged it (the log dock has it); the loaded model, if any, stays.
    failed_load_ = path;
    if (fallBackToLocal(path, message)) return;
    model_bar_->forgetPath(path);
    if (const auto& kept = engine_->model()) {
      model_bar_->setLoaded(*kept);
      banner_->showError(tr("Could not load %1: %2. %3 is still loaded.").arg(path, message, kept->name));
    } else {
      model_bar_->setUnloaded();
      banner_->showError(tr("Could not load %1: %2").arg(path, message));
    }
    setGenerating(controller_->generating());
  });
  connect(e, &EngineBridge::modelUnloaded, this, [this] {
    model_bar_->setUnloaded();
    setWindowTitle(QStringLiteral("Hearth"));
    setGenerating(controller_->generating());
  });
  connect(e, &EngineBridge::statsUpdated, history_, &StatsHistoryModel::append);
  connectGeneration();
  connectReview();
  connectProfiler();
}

void MainWindow::connectGeneration() {
  connect(generation_, &ConversationSettingsKeeper::settingsChanged, this, &MainWindow::applyGeneration);
  connect(generation_panel_, &GenerationPanel::changed, generation_, &ConversationSettingsKeeper::edit);
  connect(generation_panel_, &GenerationPanel::resetRequested, generation_, &ConversationSettingsKeeper::reset);
  connect(generation_panel_, &GenerationPanel::saveDefaultsRequested, this, [this](const GenerationSettings& g) {
    store_generation_defaults(g, settings_.values);
    saveSettings();
    generation_->defaultsChanged();
    banner_->showNotice(tr("Saved as the settings for new conversations."), {}, {}, 4000);
  });
  connect(generation_panel_, &GenerationPanel::contextLengthChosen, this, [this](int tokens) {
    if (tokens == settings_.values.context_length) return;
    settings_.values.context_length = tokens;
    saveSettings();
    if (engine_->model()) loadModel(engine_->model()->path);  // the context is the model's: a reload
  });
  // A send from the new chat (however it was asked for) creates the conversation that adopts its settings.
  connect(controller_.get(), &ChatController::generatingChanged, this, [this](bool on) {
    if (controller_->currentConversation() == 0) new_chat_sent_ = on;  // off: the send failed
  });
  connect(controller_.get(), &ChatController::conversationOpened, this, [this](qint64 id) {
    if (id != 0 && std::exchange(new_chat_sent_, false)) {
      generation_->adoptNewChat(id);  // the new chat's settings go with it
    } else if (id != generation_->conversation() || id == 0) {
      generation_->open(id);
    }
    // Kept at once, not only on close: after a crash the app reopens the conversation the user was in.
    if (id != 0 && last_conversation(settings_.values) != id) {
      set_last_conversation(settings_.values, id);
      saveSettings();
    }
  });
}

GenerationSettings MainWindow::generationDefaults() const {
  GenerationSettings g = generation_defaults(settings_.values);
  if (max_tokens_override_) g.max_tokens = *max_tokens_override_;
  return g;
}

void MainWindow::applyGeneration(const GenerationSettings& g) {
  generation_panel_->setSettings(g);
  controller_->setSampling(g.sampling);
  controller_->setMaxTokens(g.max_tokens);
  controller_->setSystemPrompt(g.system_prompt);
}

void MainWindow::sendInput() {
  const QString text = input_->toPlainText();
  if (text.trimmed().isEmpty()) return;
  if (controller_->generating()) return banner_->showError(tr("Wait for the current answer, or press Stop (Esc)."));
  if (!engine_->model()) return banner_->showError(tr("No model is loaded yet."));
  controller_->send(text);
  input_->clear();
}

void MainWindow::setGenerating(bool generating) {
  const bool ready = engine_->model().has_value();
  stop_->setEnabled(generating);
  send_->setEnabled(!generating && ready);
  regenerate_->setEnabled(!generating && ready && !controller_->chatModel()->rows().empty());
}

void MainWindow::setTheme(Theme theme) {
  theme_ = theme;
  const bool dark = apply_theme(*qApp, theme);
  perf_dock_->setDark(dark);
  if (theme_group_) {
    for (QAction* a : theme_group_->actions()) a->setChecked(a->data().toString() == to_string(theme));
  }
}

void MainWindow::loadModel(const QString& path_or_name) {
  models::RunConfig config = run_config_of(settings_.values);
  if (!quant_override_.empty()) config.quant = quant_override_;  // a latency suggestion chose a coarser format
  engine_->loadModel(path_or_name, config);
}

void MainWindow::applySettings(const MainWindowOptions& options) {
  const settings::Settings& s = settings_.values;
  max_tokens_override_ = options.max_tokens;
  applyGeneration(generationDefaults());
  generation_panel_->setContextLength(s.context_length);
  model_bar_->setDeviceSetting(QString::fromStdString(s.device));
  bool placed = false;
  if (options.restore_state) {
    placed = restoreGeometry(blob_from_base64(s.window_geometry));
    restoreState(blob_from_base64(s.panel_layout));
    restore_conversation_ = last_conversation(s);
  }
  if (!placed) placeFirstWindow();
  setTheme(options.theme.value_or(theme_of(s)));
  if (!settings_.warnings.isEmpty())
    banner_->showError(tr("Settings: %1").arg(settings_.warnings.join(QStringLiteral("; "))));
}

// The first window: 70% of the screen, centred (LM Studio and Jan open large;
// Qt's default is whatever the layout's size hint says).
void MainWindow::placeFirstWindow() {
  const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen();
  if (!screen) return;
  const QRect area = screen->availableGeometry();
  const QSize size = (area.size() * 0.7).expandedTo(minimumSizeHint()).boundedTo(area.size());
  resize(size);
  move(area.center() - QPoint(size.width() / 2, size.height() / 2));
}

void MainWindow::saveSettings() {
  if (settings_.path.empty()) return;  // the warning was shown at start
  if (auto saved = save_app_settings(settings_); !saved) {
    const QString message = QString::fromStdString(saved.error().describe());
    log::get("app")->warn("could not save the settings: {}", message.toStdString());
    banner_->showError(tr("Could not save the settings: %1").arg(message));
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  settings_.values.window_geometry = blob_to_base64(saveGeometry());
  settings_.values.panel_layout = blob_to_base64(saveState());
  set_last_conversation(settings_.values, controller_->currentConversation());
  saveSettings();
  event->accept();
}

}  // namespace hearth::app

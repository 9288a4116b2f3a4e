// The main window: conversations dock (left), model bar, banner, chat view
// and input (centre), performance dock (right), log dock (bottom). Owns the
// engine bridge, the storage service and the chat controller. Its preferences
// come from the settings file (app_settings.h): theme, last model, context
// length, sampling defaults, models folder, geometry, dock layout and the last
// conversation; they are saved when they change and on close.
#pragma once

#include <QMainWindow>
#include <QStringList>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/sinks/sink.h>

#include "app/app_settings.h"
#include "app/engine_types.h"
#include "app/generation_panel.h"
#include "app/theme.h"

class QPushButton;
class QActionGroup;

namespace hearth::advice {
struct Suggestion;
}

namespace hearth::app {

class Banner;
class ChatController;
class ChatView;
class ConversationDock;
class HistoryWindow;
class ConversationSettingsKeeper;
class EngineBridge;
class PromptedBackend;
class InputBox;
class LatencyAdvisor;
class LogModel;
struct LoadedModel;
class LoadOptionsDialog;
class ModelBar;
class ModelManagerDialog;
class PerfDock;
class ProfilerDock;
class StatsHistoryModel;
class StorageService;

struct MainWindowOptions {
  QString model;           // path or catalog name; empty: the last one used, else the catalog default
  QString database_path;   // empty: default_database_path()
  QString settings_path;   // empty: settings::default_settings_path()
  bool load_model = true;  // false: start with nothing loaded (screenshots of the empty state)
  // The first start (no settings file): the device, context and KV precision
  // chosen for this machine (models/recommend.h) and kept in the settings.
  bool choose_defaults = true;
  bool restore_state = true;      // false: ignore the saved geometry, dock layout and conversation
  std::optional<int> max_tokens;  // per answer; overrides the settings' default for this session (tests)
  std::optional<Theme> theme;     // overrides the saved choice for this session (not saved)
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(const MainWindowOptions& options, QWidget* parent = nullptr);
  ~MainWindow() override;

  ChatController* controller() const { return controller_.get(); }
  // File > Load with options: the estimate of each choice, then a load with the choice kept in the settings.
  void openLoadOptions();
  LoadOptionsDialog* loadOptionsDialog() const { return load_options_; }  // while open (tests)
  EngineBridge* engine() const { return engine_.get(); }
  StorageService* storage() const { return storage_.get(); }
  StatsHistoryModel* history() const { return history_; }
  PerfDock* perfDock() const { return perf_dock_; }
  ProfilerDock* profilerDock() const { return profiler_dock_; }
  LatencyAdvisor* latencyAdvisor() const { return advisor_; }
  GenerationPanel* generationPanel() const { return generation_panel_; }
  PromptedBackend* promptedBackend() const { return prompted_.get(); }
  Banner* banner() const { return banner_; }
  const AppSettings& settings() const { return settings_; }
  Theme theme() const { return theme_; }
  void setTheme(Theme theme);
  HistoryWindow* showHistoryWindow();  // the prompt history window: made on first use, then raised
  // The model manager (main_window_models.cpp): made on first use, then raised; null
  // where the build has no installer (no cpp-httplib or zlib).
  ModelManagerDialog* showModelManager();

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildCentral();
  void buildDocks();
  void buildMenus();
  void connectParts();
  void applySettings(const MainWindowOptions& options);
  void placeFirstWindow();
  void saveSettings();  // writes the file; a failure goes to the banner and the log
  void loadModel(const QString& path_or_name);
  void sendInput();
  void setGenerating(bool generating);
  void connectGeneration();
  void connectReview();    // prompt history, rerun/compare, ratings, variables form (main_window_review.cpp)
  void connectProfiler();  // main_window_profiler.cpp
  void connectAdvice();    // main_window_profiler.cpp
  void applySuggestion(const advice::Suggestion& suggestion);  // a latency suggestion the user accepted
  GenerationSettings generationDefaults() const;
  void applyGeneration(const GenerationSettings& g);  // the open conversation's: in the panel and in use
  QString initialModel(const MainWindowOptions& options) const;
  // The remote endpoint (main_window_remote.cpp): at start the one last used,
  // if the app was on it, else the local model; remembered when used.
  void startModel(const MainWindowOptions& options);
  void adoptChosenDefaults(const ChosenDefaults& chosen);  // the first start's choice becomes the settings
  void askForRemoteEndpoint();
  void rememberBackend(const LoadedModel& model);  // settings: the endpoint in use, or none
  // A failed connection to the endpoint tried at start: the banner says so and
  // the local model loads instead. False for any other failure.
  bool fallBackToLocal(const QString& url, const QString& message);

  AppSettings settings_;
  std::unique_ptr<StorageService> storage_;  // destroyed last: finishes queued writes
  std::unique_ptr<EngineBridge> engine_;
  std::unique_ptr<PromptedBackend> prompted_;  // the controller's backend: engine_ with the system prompt
  std::unique_ptr<ChatController> controller_;
  StatsHistoryModel* history_ = nullptr;
  LogModel* log_ = nullptr;
  spdlog::sink_ptr log_sink_;
  ModelBar* model_bar_ = nullptr;
  ModelManagerDialog* model_manager_ = nullptr;
  Banner* banner_ = nullptr;
  ChatView* chat_view_ = nullptr;
  InputBox* input_ = nullptr;
  QPushButton* send_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* regenerate_ = nullptr;
  ConversationDock* conversations_ = nullptr;
  PerfDock* perf_dock_ = nullptr;
  ProfilerDock* profiler_dock_ = nullptr;
  LatencyAdvisor* advisor_ = nullptr;
  QStringList chosen_reasons_;
  LoadOptionsDialog* load_options_ =
      nullptr;                  // why the first start chose what it did (the load options dialog shows them)
  std::string quant_override_;  // a weight format from an accepted latency suggestion (this session)
  QDockWidget* log_dock_ = nullptr;
  QDockWidget* prompt_dock_ = nullptr;  // the prompt library (PromptLibraryPanel)
  QDockWidget* generation_dock_ = nullptr;
  GenerationPanel* generation_panel_ = nullptr;
  // Per conversation, in the store; the settings file holds the defaults.
  // Each answer's generation record keeps what it used.
  ConversationSettingsKeeper* generation_ = nullptr;
  bool new_chat_sent_ = false;  // the new chat's settings move to the conversation its first send creates
  std::optional<int> max_tokens_override_;
  QActionGroup* theme_group_ = nullptr;
  Theme theme_ = Theme::kSystem;
  qint64 restore_conversation_ = 0;  // opened once the store is ready
  QString failed_load_;     // the load that just failed: a modelLoaded() after it is the kept model, not a success
  QString startup_remote_;  // the endpoint tried at start, until it answers or fails
  bool remote_fallback_ = false;  // the local model loading in its place: the endpoint stays the one to reconnect to
};

}  // namespace hearth::app

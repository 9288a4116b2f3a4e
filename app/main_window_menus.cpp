// The main window's menus and keyboard shortcuts.
#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QDockWidget>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>

#include "app/chat_controller.h"
#include "app/conversation_dock.h"
#include "app/export_actions.h"
#include "app/input_box.h"
#include "app/main_window.h"

#include "app/app_icon.h"
#include "app/model_bar.h"
#include "app/perf_dock.h"
#include "app/profiler_dock.h"

namespace hearth::app {

void MainWindow::buildMenus() {
  auto* c = controller_.get();
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&New conversation"), QKeySequence::New, c, &ChatController::newConversation);
  file->addAction(tr("&Open model\u2026"), QKeySequence::Open, model_bar_, &ModelBar::openFileDialog);
  file->addAction(tr("Refresh installed models"), model_bar_, &ModelBar::refreshInstalled);
  file->addAction(tr("&Load with options\u2026"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this,
                  &MainWindow::openLoadOptions);
  file->addSeparator();
  add_export_menu(file, this, storage_.get(), c, banner_);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* chat = menuBar()->addMenu(tr("&Chat"));
  chat->addAction(tr("&Stop"), QKeySequence(Qt::Key_Escape), c, &ChatController::stop);
  chat->addAction(tr("&Regenerate"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), c, &ChatController::regenerate);
  chat->addAction(tr("Focus &input"), QKeySequence(Qt::CTRL | Qt::Key_L), input_, [this] { input_->setFocus(); });
  chat->addSeparator();
  chat->addAction(tr("Prompt &history…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_H), this,
                  [this] { showHistoryWindow(); });
  chat->addAction(tr("&Search conversations"), QKeySequence::Find, this, [this] {
    conversations_->show();
    conversations_->searchField()->setFocus();
    conversations_->searchField()->selectAll();
  });
  chat->addAction(tr("Re&name conversation\u2026"), QKeySequence(Qt::Key_F2), conversations_,
                  &ConversationDock::renameSelected);
  QAction* remove =
      chat->addAction(tr("&Delete conversation\u2026"), conversations_, &ConversationDock::deleteSelected);
  remove->setShortcut(QKeySequence::Delete);
  remove->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  conversations_->addAction(remove);

  QMenu* model = menuBar()->addMenu(tr("&Model"));
  model->setObjectName(QStringLiteral("modelMenu"));
  model->addAction(tr("&Open model\u2026"), model_bar_, &ModelBar::openFileDialog);
  QAction* manager = model->addAction(tr("Model &manager\u2026"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M), this,
                                      [this] { showModelManager(); });
  manager->setObjectName(QStringLiteral("modelManagerAction"));
#if !defined(HEARTH_APP_HAVE_INSTALL)
  manager->setEnabled(false);  // this build has no installer
#endif
  model->addAction(tr("Refresh installed models"), model_bar_, &ModelBar::refreshInstalled);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  QAction* show_conversations = conversations_->toggleViewAction();
  show_conversations->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
  QAction* show_perf = perf_dock_->toggleViewAction();
  show_perf->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
  QAction* show_log = log_dock_->toggleViewAction();
  show_log->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L));
  QAction* show_prompts = prompt_dock_->toggleViewAction();
  show_prompts->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Y));
  view->addActions({show_conversations, show_perf, show_log, show_prompts});
  QAction* show_generation = generation_dock_->toggleViewAction();
  show_generation->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G));
  QAction* show_profiler = profiler_dock_->toggleViewAction();
  show_profiler->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K));
  view->addActions({show_conversations, show_generation, show_perf, show_log, show_profiler});
  view->addSeparator();
  QMenu* theme = view->addMenu(tr("&Theme"));
  theme_group_ = new QActionGroup(this);
  for (Theme t : {Theme::kSystem, Theme::kLight, Theme::kDark}) {
    const QString name = to_string(t);
    QAction* a = theme->addAction(t == Theme::kSystem  ? tr("Follow the &system")
                                  : t == Theme::kLight ? tr("&Light")
                                                       : tr("&Dark"));
    a->setCheckable(true);
    a->setData(name);
    a->setChecked(t == theme_);
    theme_group_->addAction(a);
    connect(a, &QAction::triggered, this, [this, t] {
      setTheme(t);
      set_theme(settings_.values, t);  // a menu choice is kept; a --theme override is not
      saveSettings();
    });
  }

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Hearth"), this, [this] {
    QMessageBox box(this);
    box.setObjectName(QStringLiteral("aboutBox"));
    box.setWindowTitle(tr("About Hearth"));
    box.setIconPixmap(app_icon().pixmap(64, 64));
    box.setText(tr("<b>Hearth %1</b><p>Local LLM chat with its own inference engine.</p>")
                    .arg(QApplication::applicationVersion()));
    box.exec();
  });
}

}  // namespace hearth::app
